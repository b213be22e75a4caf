// The transports as their Go drivers word and offer them (a Go test keeps
// gatewaykinds.json current), for tests: no test copies their words.
import type { Transport } from "../types";
import registered from "./gatewaykinds.json";

const byTitle = (title: string): Transport => registered.find((k) => k.title === title)!.transport;

/** The dashboard gateway's (its conversations are sessions). */
export const dashboard = byTitle("Dashboard gateway");
/** The API server's (its conversations are runs). */
export const apiServer = byTitle("API server");

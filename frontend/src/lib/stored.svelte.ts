// Each API server's stored sessions, asked for while the window is open:
// when a gateway that keeps them connects, and every storedEvery ms. Nothing asks while the window is closed (the page is gone).
// The card and the quick prompt read the same listing, so both name a
// session alike.
import { api, message } from "./bridge";
import type { GatewayView, StoredSessions } from "./types";

/** How often the listing is asked for while the window is open. */
export const storedEvery = 10_000;

export interface StoredState {
  list?: StoredSessions;
  /** Why the last listing failed (the previous one, if any, stands). */
  error?: string;
}

/** By gateway name. */
export const stored = $state<Record<string, StoredState>>({});

/** The connected gateways whose transport lists stored sessions. */
export function storedGateways(gateways: GatewayView[]): string[] {
  return gateways.filter((g) => g.state === "connected" && g.transport.continues_sessions).map((g) => g.name);
}

/** Asks each gateway for its listing once; a gateway that went away is
 *  forgotten. */
export async function refreshStored(names: string[]): Promise<void> {
  for (const k of Object.keys(stored)) if (!names.includes(k)) delete stored[k];
  await Promise.all(
    names.map(async (name) => {
      try {
        stored[name] = { list: await api.storedSessions(name) };
      } catch (e) {
        stored[name] = { list: stored[name]?.list, error: message(e) };
      }
    }),
  );
}

/** Asks again every storedEvery ms while the page lives; returns the
 *  stop function. gateways is read at every round. (The page also asks
 *  at once whenever the set of such gateways changes.) */
export function keepStored(gateways: () => GatewayView[]): () => void {
  const every = setInterval(() => refreshStored(storedGateways(gateways())), storedEvery);
  return () => clearInterval(every);
}

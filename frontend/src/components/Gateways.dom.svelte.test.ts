// @vitest-environment happy-dom
// A failed Reconnect is not said twice and does not outlive the problem;
// a gateway's row words and offers what its transport declares.
import { describe, expect, it, vi } from "vitest";
import { flushSync, mount, tick, unmount } from "svelte";

const why = "its token could not be read from the system keychain: click Edit and enter the token again";
const followed = { gateway: "g", id: "run_c67e025d9f1b4e0a", transport: "api", name: "Untitled run" };
vi.mock("../lib/bridge", () => ({
  api: {
    reconnect: async (name: string) => Promise.reject(new Error(`${name}: ${why}`)),
    followRun: async () => followed,
  },
  message: (e: unknown) => (e instanceof Error ? e.message : String(e)),
}));

import Gateways from "./Gateways.svelte";
import type { GatewayView, Snapshot } from "../lib/types";
import { apiServer, dashboard } from "../lib/testdata/transports";

const snap = (g: GatewayView): Snapshot => ({
  version: "test",
  gateways: [g],
  sessions: [],
  approvals: [],
  recent: [],
  choices: [],
  notifications_paused: false,
  secrets_session_only: true,
  autostart: false,
  now: "2026-12-03T10:00:00Z",
  live: [],
  tray_missing: false,
  quit_without_tray: false,
  notify_run_finished: false,
});

describe("Gateways (DOM)", () => {
  it("says a failed Reconnect once, in the row, until the gateway is connected", async () => {
    const props = $state({ snap: snap({ name: "demo", url: "", kind: "ws", state: "config_error", error: why, may_have_missed_events: false, transport: dashboard }) });
    const target = document.createElement("div");
    document.body.appendChild(target);
    const view = mount(Gateways, { target, props });
    const reconnect = [...target.querySelectorAll("button")].find((b) => b.textContent === "Reconnect")!;
    reconnect.click();
    await tick();
    await Promise.resolve();
    flushSync();
    expect(target.textContent!.split(why).length - 1).toBe(1); // the row's own error, not a second copy

    // Edit fixed it: connected, no error left on screen.
    props.snap = snap({ name: "demo", url: "", kind: "ws", state: "connected", may_have_missed_events: false, transport: dashboard });
    flushSync();
    expect(target.textContent).not.toContain(why);
    unmount(view);
  });

  it.each([
    ["a dashboard gateway", dashboard, "", ""],
    ["an API server", apiServer, "API server", "Follow run ID"],
    ["a transport the window has never heard of", { ...dashboard, conversation: "spell", badge: "Toy", follow_by_id: true, follow_hint: "spell_…" }, "Toy", "Follow spell ID"],
  ])("words and offers %s as its transport does", (_, transport, badge, follow) => {
    const target = document.createElement("div");
    const view = mount(Gateways, { target, props: { snap: snap({ name: "g", url: "", kind: "", state: "connected", may_have_missed_events: false, transport }) } });
    flushSync();
    const row = target.querySelector(".row")!.textContent!;
    if (badge) expect(row).toContain(badge);
    else expect(row).not.toMatch(/API server|Toy/);
    const button = target.querySelector(".followrun button");
    expect(button?.textContent ?? "").toBe(follow);
    if (follow) expect(target.querySelector(".followrun input")!.getAttribute("placeholder")).toBe(transport.follow_hint);
    unmount(view);
  });

  it.each([
    ["connected", "connected", "", "muted"],
    ["not installed", "config_error", "", "muted"],
    ["refused", "auth_failed", "the Hermes dashboard refused Herald's token for the bridge: check the gateway's token", "err"],
  ])("says the bridge's state (%s) on its gateway's row, plainly", (_, state, error, cls) => {
    const text = state === "config_error" ? "plugin not installed on the Hermes host: run `herald bridge install` there" : state === "auth_failed" ? "refused" : "connected";
    const target = document.createElement("div");
    const g: GatewayView = { name: "lab", url: "", kind: "", state: "connected", may_have_missed_events: false, transport: dashboard, bridge: { name: "Herald bridge", state, text, error } };
    const view = mount(Gateways, { target, props: { snap: snap(g) } });
    flushSync();
    const line = target.querySelector('[data-testid="bridge-lab"]')!;
    expect(line.textContent).toContain("Herald bridge: ");
    expect(line.textContent).toContain(text.replace(/`/g, ""));
    if (error) expect(line.textContent).toContain(error);
    expect(line.classList.contains(cls)).toBe(true);
    if (state === "config_error") expect(line.querySelector("code")?.textContent).toBe("herald bridge install");
    expect(target.querySelector(".gw > .err:not(.bridge)")).toBeNull(); // the gateway itself shows no error
    unmount(view);
  });

  it("says a run followed by its one name, not by the id typed", async () => {
    const props = $state({ snap: snap({ name: "g", url: "", kind: "api", state: "connected", may_have_missed_events: false, transport: apiServer }) });
    const target = document.createElement("div");
    document.body.appendChild(target);
    const view = mount(Gateways, { target, props });
    flushSync();
    const input = target.querySelector<HTMLInputElement>(".followrun input")!;
    input.value = "c67e025d";
    input.dispatchEvent(new Event("input"));
    target.querySelector<HTMLButtonElement>(".followrun button")!.click();
    await tick();
    await Promise.resolve();
    flushSync();
    const ok = () => target.querySelector('[data-testid="follow-run-ok-g"]');
    expect(ok()?.textContent).toBe("Following “Untitled run”.");
    expect(ok()?.getAttribute("title")).toBe("Run ID run_c67e025d9f1b4e0a"); // the id, in the details
    // Its first events give it its start time: the line says its name now.
    props.snap = {
      ...props.snap,
      sessions: [{ gateway: "g", id: followed.id, running: true, updated: "", started: "", name: "Untitled run, started 13:54" }],
    };
    flushSync();
    expect(ok()?.textContent).toBe("Following “Untitled run, started 13:54”.");
    expect(target.textContent).not.toContain("c67e025d");
    unmount(view);
    target.remove();
  });

  it("shows no bridge line for a gateway without one", () => {
    const target = document.createElement("div");
    const view = mount(Gateways, { target, props: { snap: snap({ name: "lab", url: "", kind: "", state: "connected", may_have_missed_events: false, transport: dashboard }) } });
    flushSync();
    expect(target.querySelector('[data-testid="bridge-lab"]')).toBeNull();
    unmount(view);
  });
});

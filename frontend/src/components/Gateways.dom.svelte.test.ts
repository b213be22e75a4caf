// @vitest-environment happy-dom
// A failed Reconnect is not said twice and does not outlive the problem.
import { describe, expect, it, vi } from "vitest";
import { flushSync, mount, tick, unmount } from "svelte";

const why = "its token could not be read from the system keychain: click Edit and enter the token again";
vi.mock("../lib/bridge", () => ({
  api: { reconnect: async (name: string) => Promise.reject(new Error(`${name}: ${why}`)) },
  message: (e: unknown) => (e instanceof Error ? e.message : String(e)),
}));

import Gateways from "./Gateways.svelte";
import type { GatewayView, Snapshot } from "../lib/types";

const snap = (g: GatewayView): Snapshot => ({
  version: "test",
  gateways: [g],
  sessions: [],
  approvals: [],
  recent: [],
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
    const props = $state({ snap: snap({ name: "demo", url: "", kind: "ws", state: "config_error", error: why, may_have_missed_events: false }) });
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
    props.snap = snap({ name: "demo", url: "", kind: "ws", state: "connected", may_have_missed_events: false });
    flushSync();
    expect(target.textContent).not.toContain(why);
    unmount(view);
  });
});

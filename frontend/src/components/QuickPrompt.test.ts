// The quick prompt shows the target it sends to: its select never looks
// empty while Send would go to the first target, and a target that cannot
// be reached is said so, with Send off.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import QuickPrompt from "./QuickPrompt.svelte";
import type { Snapshot } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";
import { snapshotOf } from "../lib/testdata/snapshot";

function snap(extra: Partial<Snapshot> = {}, state = "connected"): Snapshot {
  return snapshotOf({
    gateways: [{ name: "demo", url: "http://127.0.0.1:9119", kind: "ws", state, may_have_missed_events: false, transport: dashboard }],
    ...extra,
  });
}

describe("QuickPrompt", () => {
  it("shows the only target selected", () => {
    const { body } = render(QuickPrompt, { props: { snap: snap() } });
    expect(body).toMatch(/<option[^>]*selected[^>]*>demo: new session<\/option>/);
    expect(body).not.toContain('data-testid="ask-unreachable"');
  });
  it("shows the first target selected when there are several", () => {
    const { body } = render(QuickPrompt, { props: { snap: snap({ sessions: [{ gateway: "demo", id: "a1", title: "fix tests", name: "fix tests", running: true, updated: "2026-12-03T10:00:00Z", started: "" }] }) } });
    expect(body).toMatch(/<option[^>]*selected[^>]*>demo: fix tests \(running\)<\/option>/);
    expect(body).not.toMatch(/<option[^>]*selected[^>]*>demo: new session<\/option>/);
  });
  it("keeps a gateway that is not connected, with Send off and the reason", () => {
    const { body } = render(QuickPrompt, { props: { snap: snap({}, "reconnecting") } });
    expect(body).toMatch(/<option[^>]*selected[^>]*>demo: new session \(not reachable\)<\/option>/);
    expect(body).toMatch(/<button[^>]*type="submit"[^>]*disabled/);
    expect(body).toContain("demo is not connected (Reconnecting): Send waits until it is back.");
  });
});

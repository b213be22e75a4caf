// The quick prompt shows the target it sends to: its select never looks
// empty while Send would go to the first target.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import QuickPrompt from "./QuickPrompt.svelte";
import type { Snapshot } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";
import { snapshotOf } from "../lib/testdata/snapshot";

function snap(extra: Partial<Snapshot> = {}): Snapshot {
  return snapshotOf({
    gateways: [{ name: "demo", url: "http://127.0.0.1:9119", kind: "ws", state: "connected", may_have_missed_events: false, transport: dashboard }],
    ...extra,
  });
}

describe("QuickPrompt", () => {
  it("shows the only target selected", () => {
    const { body } = render(QuickPrompt, { props: { snap: snap() } });
    expect(body).toMatch(/<option[^>]*selected[^>]*>demo: new session<\/option>/);
  });
  it("shows the first target selected when there are several", () => {
    const { body } = render(QuickPrompt, { props: { snap: snap({ sessions: [{ gateway: "demo", id: "a1", title: "fix tests", name: "fix tests", running: true, updated: "2026-12-03T10:00:00Z" }] }) } });
    expect(body).toMatch(/<option[^>]*selected[^>]*>demo: fix tests \(running\)<\/option>/);
    expect(body).not.toMatch(/<option[^>]*selected[^>]*>demo: new session<\/option>/);
  });
});

// A Stop's outcome stays on screen after the run ended: the gateway's
// confirmation ends the run, which removes the Stop button, so the
// outcome must not live in the button.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import Gateways from "./Gateways.svelte";
import { runKey, stopResults } from "../lib/stopResults.svelte";
import type { Snapshot } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";
import { snapshotOf } from "../lib/testdata/snapshot";

function snap(running: boolean): Snapshot {
  return snapshotOf({
    gateways: [{ name: "lab", url: "http://127.0.0.1:9119", kind: "ws", state: "connected", may_have_missed_events: false, transport: dashboard }],
    sessions: [{ gateway: "lab", id: "a1", name: "a1", running, status: running ? "" : "interrupted", updated: "2026-12-03T10:00:00Z", started: "" }],
  });
}

describe("Stop outcome", () => {
  it("shows the confirmed stop once the run ended and its button is gone", () => {
    stopResults[runKey("lab", "a1")] = { text: "lab/a1: turn interrupted (confirmed by the gateway)", error: false };
    const { body } = render(Gateways, { props: { snap: snap(false) } });
    expect(body).not.toContain('data-testid="stop-lab-a1"');
    expect(body).toContain("lab/a1: turn interrupted (confirmed by the gateway)");
    delete stopResults[runKey("lab", "a1")];
  });
  it("shows a failed stop next to the button of the still running run", () => {
    stopResults[runKey("lab", "a1")] = { text: "the gateway did not confirm the stop: try again", error: true };
    const { body } = render(Gateways, { props: { snap: snap(true) } });
    expect(body).toContain('data-testid="stop-lab-a1"');
    expect(body).toMatch(/role="alert"[^>]*>the gateway did not confirm the stop: try again/);
    delete stopResults[runKey("lab", "a1")];
  });
  it("shows nothing for a run never stopped", () => {
    const { body } = render(Gateways, { props: { snap: snap(false) } });
    expect(body).not.toContain("stop-result-lab-a1");
  });
});

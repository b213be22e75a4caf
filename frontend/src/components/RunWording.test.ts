// An API server's request belongs to a run, not a session: the sheet says
// "run" and a stopped run reads "Run stopped", not "Turn interrupted", as
// the request's transport (its driver, in Go) words it.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import ApprovalSheet from "./ApprovalSheet.svelte";
import PromptSheet from "./PromptSheet.svelte";
import type { Approval } from "../lib/types";
import { apiServer, dashboard } from "../lib/testdata/transports";

const stopped: Approval = {
  key: "api/run_1/1",
  id: "1",
  kind: "approval",
  transport: apiServer,
  gateway: "api",
  session: "run_1",
  command: "kubectl delete ns staging",
  display_command: "kubectl delete ns staging",
  display: { command: "kubectl delete ns staging", masked: "", first_line: "", gateway: "api", session: "Fix the build", session_id: "run_1", lines: 1, expiry_known: true },
  choices: ["once", "deny"],
  received_at: "2026-12-03T10:00:00Z",
  expires_at: "2026-12-03T10:05:00Z",
  dialect: "event",
  state: "cancelled",
  outcome: { at: "2026-12-03T10:01:00Z", reason: "interrupted" },
};
const now = Date.parse("2026-12-03T10:02:00Z");

describe("run wording", () => {
  it("says run for an API server", () => {
    const { body } = render(ApprovalSheet, { props: { approval: stopped, now } });
    // Its one name in the header (never "run run_1"), its id in the details.
    expect(body).toMatch(/· <span[^>]*>Fix the build<\/span>/);
    expect(body).toMatch(/run ID <code[^>]*>run_1<\/code>/);
    expect(body).not.toMatch(/run run/);
    expect(body).toContain("Run stopped");
    expect(body).not.toContain("Turn interrupted");
  });
  it("says session and turn for a dashboard gateway", () => {
    const { body } = render(ApprovalSheet, { props: { approval: { ...stopped, gateway: "lab", transport: dashboard }, now } });
    expect(body).toMatch(/session ID <code[^>]*>run_1<\/code>/);
    expect(body).toContain("Turn interrupted");
  });
  it("says run on a prompt from an API server too", () => {
    const { body } = render(PromptSheet, { props: { approval: { ...stopped, kind: "clarify", question: "Which?", choices: [] }, now } });
    expect(body).toMatch(/title="run ID run_1"[^>]*>Fix the build<\/span>/);
  });
});

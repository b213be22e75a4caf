import { describe, expect, it } from "vitest";
import { countdown, missedText, outcomeText, sessionName, stateText, testStageText } from "./format";
import { choiceForKey, orderedChoices } from "./choices";
import { askTargets } from "./runs";
import type { Approval } from "./types";
import { dashboard } from "./testdata/transports";

const base: Approval = {
  transport: dashboard,
  key: "k",
  id: "k",
  kind: "approval",
  gateway: "home",
  session: "s",
  command: "rm -rf ./build",
  display_command: "rm -rf ./build",
  display: { command: "rm -rf ./build", masked: "rm -rf ./build", first_line: "rm -rf ./build", gateway: "home", session: "s", session_id: "s", lines: 1, expiry_known: true },
  choices: ["once", "session", "always", "deny"],
  received_at: "2026-12-02T10:00:00Z",
  expires_at: "2026-12-02T10:05:00Z",
  dialect: "event",
  state: "pending",
  outcome: { at: "2026-12-02T10:00:00Z" },
};

describe("countdown", () => {
  const t0 = Date.parse("2026-12-02T10:00:00Z");
  it.each([
    [0, "5:00"],
    [1, "5:00"],
    [1000, "4:59"],
    [299_000, "0:01"],
    [299_999, "0:01"],
    [300_000, "expired"],
    [400_000, "expired"],
  ])("at +%ims shows %s", (dt, want) => {
    expect(countdown(base.expires_at, t0 + dt)).toBe(want);
  });
  it("treats an unparseable time as expired", () => {
    expect(countdown("nonsense", t0)).toBe("expired");
  });
});

describe("shortcuts", () => {
  it("map keys to offered choices only", () => {
    expect(choiceForKey("o", base.choices)).toBe("once");
    expect(choiceForKey("D", base.choices)).toBe("deny");
    expect(choiceForKey("a", ["once", "deny"])).toBeUndefined();
    expect(choiceForKey("x", base.choices)).toBeUndefined();
  });
  it("order choices with deny last", () => {
    expect(orderedChoices(["deny", "always", "once"])).toEqual(["once", "always", "deny"]);
  });
});

describe("outcomeText keeps outcomes distinct", () => {
  const cases: [Partial<Approval>, string][] = [
    [{}, "Waiting for you"],
    [{ uncertain: true }, "May still be pending"],
    [{ last_error: "not connected" }, "Not sent: not connected"],
    [{ state: "answering", outcome: { at: "", choice: "once" } }, "Sending “Allow once”…"],
    [{ state: "resolved", outcome: { at: "", choice: "deny", surface: "tray" } }, "Deny — confirmed by the gateway (from tray)"],
    [{ state: "expired" }, "Timed out — the command did not run"],
    [{ state: "cancelled", outcome: { at: "", reason: "resolved_elsewhere" } }, "Settled elsewhere"],
    [{ state: "cancelled", outcome: { at: "", reason: "interrupted" } }, "Turn interrupted"],
    [{ state: "cancelled", outcome: { at: "", reason: "superseded", detail: "answer it in Hermes" } }, "No longer answerable here: answer it in Hermes"],
    [{ state: "failed", outcome: { at: "", error: "bad" } }, "Cannot be answered here: bad"],
    [{ state: "sent-unknown", outcome: { at: "", choice: "once" } }, "“Allow once” sent, outcome unknown: the link dropped before the gateway confirmed it. Herald will not send it again"],
    [{ state: "sent-unknown", outcome: { at: "", choice: "deny", detail: "answer sent and applied, outcome unknown for this request: two approvals waited at once" } }, "“Deny”: answer sent and applied, outcome unknown for this request: two approvals waited at once"],
    [{ state: "outcome-unknown", outcome: { at: "", choice: "once" } }, "“Allow once” sent, outcome unknown"],
  ];
  it.each(cases)("%j", (patch, want) => {
    expect(outcomeText({ ...base, ...patch } as Approval)).toBe(want);
  });
  it("never invites a retry for an answer of unknown outcome", () => {
    expect(outcomeText({ ...base, state: "sent-unknown", outcome: { at: "", choice: "once" } })).not.toMatch(/try again|not sent/i);
  });
  it("never reads a superseded request as withdrawn or answered", () => {
    expect(outcomeText({ ...base, state: "cancelled", outcome: { at: "", reason: "superseded", detail: "x" } })).not.toMatch(/withdrawn|confirmed|settled/i);
  });
  it("never shows a timeout as a deny", () => {
    expect(outcomeText({ ...base, state: "expired" })).not.toMatch(/deny/i);
  });
});

describe("stateText", () => {
  it("names auth failures as an action", () => {
    expect(stateText("auth_failed")).toBe("Sign in again");
    expect(stateText("weird")).toBe("weird");
  });
});

describe("codes become words", () => {
  it("says why events may have been missed without the code", () => {
    for (const code of ["no-replay", "epoch", "new-runtime", "truncated", "resume-failed", "replay-failed", "odd-new-code"]) {
      const text = missedText(code);
      expect(text).not.toBe("");
      expect(text).not.toContain(code);
    }
    expect(missedText(undefined)).toBe("");
  });
  it("names Test's failed step in words", () => {
    for (const stage of ["http", "address", "tls", "websocket", "handshake", "key", "config"]) {
      expect(testStageText(stage)).not.toBe(stage);
    }
  });
});

describe("sessionName", () => {
  it("is the name Go gave the session, on the card and the quick prompt alike", () => {
    const s = { gateway: "lab", id: "a1b2c3d4e5", name: "Nightly⟦U+202E⟧ backup", title: "Nightly⟦U+202E⟧ backup", running: false, updated: "2026-12-03T10:00:00Z", started: "" };
    expect(sessionName(s)).toBe("Nightly⟦U+202E⟧ backup");
    const [target] = askTargets([{ name: "lab", url: "", kind: "ws", state: "connected", may_have_missed_events: false, transport: dashboard }], [s]);
    expect(target.label).toBe(`lab: ${sessionName(s)}`);
  });
  it("falls back to the title, then the id, for a snapshot without a name", () => {
    expect(sessionName({ id: "a1", title: "fix tests" })).toBe("fix tests");
    expect(sessionName({ id: "a1" })).toBe("a1");
  });
});

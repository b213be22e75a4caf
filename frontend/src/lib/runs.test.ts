import { describe, expect, it } from "vitest";
import { askResultText, askTargets, keepTarget, maxPromptBytes, promptProblem, stopResultText } from "./runs";
import { apiServer, dashboard } from "./testdata/transports";
import type { GatewayView, SessionView, Transport } from "./types";

const gw = (name: string, state = "connected", transport: Transport = dashboard): GatewayView => ({ name, url: "", kind: "", state, may_have_missed_events: false, transport });
// A transport the window has never heard of, as its driver words and offers it.
const toy: Transport = { conversation: "spell", interrupted: "Spell broken", lists_sessions: false, ask_new: true, ask_followed: false, follow_by_id: false, starts_runs: false };
const sess = (gateway: string, id: string, extra: Partial<SessionView> = {}): SessionView => ({ gateway, id, name: "", running: false, updated: "", ...extra });

describe("promptProblem", () => {
  it.each([
    ["", "Type what"],
    ["   \n ", "Type what"],
    ["do it", ""],
    ["x".repeat(maxPromptBytes), ""],
    ["x".repeat(maxPromptBytes + 1), "at most"],
    ["é".repeat(maxPromptBytes / 2 + 1), "at most"], // bytes, not characters
  ])("%#", (text, want) => {
    const got = promptProblem(text);
    if (want === "") expect(got).toBe("");
    else expect(got).toContain(want);
  });
});

describe("askTargets", () => {
  it("lists followed sessions on connected gateways, then new sessions", () => {
    const t = askTargets(
      [gw("lab"), gw("down", "reconnecting"), gw("api", "connected", apiServer)],
      [sess("lab", "a1", { title: "fix tests", running: true }), sess("lab", "b2", { stored_id: "2026_x" }), sess("down", "c3"), sess("api", "run_1")],
    );
    expect(t.map((x) => x.label)).toEqual(["lab: fix tests (running)", "lab: b2", "lab: new session", "api: new run"]);
    expect(t[0]).toMatchObject({ gateway: "lab", session: "a1" });
    expect(t[2]).toMatchObject({ gateway: "lab", session: "" });
    expect(new Set(t.map((x) => x.value)).size).toBe(t.length);
  });
  it("offers what each transport offers, in its words", () => {
    const silent: Transport = { ...toy, ask_new: false };
    const t = askTargets([gw("toybox", "connected", toy), gw("relay", "connected", silent)], [sess("toybox", "s1"), sess("relay", "s2")]);
    expect(t.map((x) => x.label)).toEqual(["toybox: new spell"]);
  });
  it("is empty when nothing is connected", () => {
    expect(askTargets([gw("lab", "auth_failed")], [sess("lab", "a")])).toEqual([]);
  });
});

describe("keepTarget", () => {
  const targets = askTargets([gw("lab")], [sess("lab", "a1", { title: "fix tests" })]);
  it("keeps the chosen target while it is offered", () => {
    expect(keepTarget(targets, targets[1].value)).toBe(targets[1].value);
    // a session that appears before it does not move the choice
    const more = askTargets([gw("lab")], [sess("lab", "a0"), sess("lab", "a1", { title: "fix tests" })]);
    expect(keepTarget(more, targets[1].value)).toBe(targets[1].value);
  });
  it("falls back to the first target, never to nothing", () => {
    expect(keepTarget(targets, "")).toBe(targets[0].value);
    expect(keepTarget(targets, "gone\u0000x")).toBe(targets[0].value);
    expect(keepTarget([], "x")).toBe("");
  });
});

describe("result texts", () => {
  it("says the gateway confirmed", () => {
    expect(askResultText({ gateway: "lab", transport: "ws", session: "a1", status: "streaming", new_session: true }, dashboard)).toBe(
      "lab: new session a1: streaming (confirmed by the gateway)",
    );
    expect(askResultText({ gateway: "api", transport: "api", session: "run_1", status: "started", new_session: true }, apiServer)).toBe(
      "api: new run run_1: started (confirmed by the gateway)",
    );
    expect(askResultText({ gateway: "lab", transport: "ws", session: "a1", status: "queued" }, dashboard)).toContain("queued after the running turn");
    expect(stopResultText({ gateway: "lab", id: "a1", transport: "ws", outcome: "interrupted", message: "lab/a1: turn interrupted (confirmed by the gateway)" })).toBe(
      "lab/a1: turn interrupted (confirmed by the gateway)",
    );
    expect(stopResultText({ gateway: "lab", id: "a1", transport: "ws", outcome: "interrupted", message: "" })).toBe("lab/a1: interrupted");
  });
});

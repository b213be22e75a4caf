import { describe, expect, it } from "vitest";
import { askResultText, askTargets, firstWords, followingText, keepTarget, maxPromptBytes, promptProblem, stopResultText } from "./runs";
import { apiServer, dashboard } from "./testdata/transports";
import type { GatewayView, SessionView, Transport } from "./types";

const gw = (name: string, state = "connected", transport: Transport = dashboard): GatewayView => ({ name, url: "", kind: "", state, may_have_missed_events: false, transport });
// A transport the window has never heard of, as its driver words and offers it.
const toy: Transport = { conversation: "spell", interrupted: "Spell broken", lists_sessions: false, ask_new: true, ask_followed: false, follow_by_id: false, starts_runs: false, continues_sessions: false };
const sess = (gateway: string, id: string, extra: Partial<SessionView> = {}): SessionView => ({ gateway, id, name: "", running: false, updated: "", started: "", ...extra });

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
  it("lists followed sessions, then new sessions, saying which cannot be reached", () => {
    const t = askTargets(
      [gw("lab"), gw("down", "reconnecting"), gw("api", "connected", apiServer)],
      [sess("lab", "a1", { name: "fix tests", running: true }), sess("lab", "b2", { stored_id: "2026_x", name: "Untitled session" }), sess("down", "c3", { name: "deploy" }), sess("api", "run_1")],
    );
    expect(t.map((x) => x.label)).toEqual(["lab: fix tests (running)", "lab: Untitled session", "down: deploy", "lab: new session", "down: new session", "api: new run"]);
    expect(t.map((x) => !!x.unreachable)).toEqual([false, false, true, false, true, false]);
    expect(t[2].unreachable).toBe("down is not connected (Reconnecting): Send waits until it is back.");
    expect(t[0]).toMatchObject({ gateway: "lab", session: "a1" });
    expect(t[1]).toMatchObject({ gateway: "lab", session: "2026_x" }); // by its stored id: the same after a restart
    expect(t[3]).toMatchObject({ gateway: "lab", session: "" });
    expect(new Set(t.map((x) => x.value)).size).toBe(t.length);
  });
  it("lists a session once when its gateway restarted it under a new live id", () => {
    const t = askTargets([gw("lab")], [sess("lab", "old", { stored_id: "2026_x", name: "deploy" }), sess("lab", "new", { stored_id: "2026_x", name: "deploy" })]);
    expect(t.map((x) => x.label)).toEqual(["lab: deploy", "lab: new session"]);
  });
  it("offers an API server's stored sessions by name, not while Herald's turn runs there", () => {
    const list = {
      gateway: "api",
      sessions: [
        { id: "s1", shown_id: "s1", name: "Release checklist", messages: 4, last_active: "" },
        { id: "s2", shown_id: "s2", name: "why does the build fail", messages: 1, last_active: "", turn: "run_9" },
      ],
    };
    const t = askTargets([gw("api", "connected", apiServer), gw("off", "reconnecting", apiServer)], [sess("api", "run_9", { stored_id: "s2", running: true })], { api: { list }, off: { list } });
    expect(t.map((x) => x.label)).toEqual(["api: Release checklist", "off: Release checklist", "api: new run", "off: new run"]);
    expect(t.map((x) => !!x.unreachable)).toEqual([false, true, false, true]);
    expect(t[0]).toMatchObject({ gateway: "api", session: "s1" });
  });
  it("offers what each transport offers, in its words", () => {
    const silent: Transport = { ...toy, ask_new: false };
    const t = askTargets([gw("toybox", "connected", toy), gw("relay", "connected", silent)], [sess("toybox", "s1"), sess("relay", "s2")]);
    expect(t.map((x) => x.label)).toEqual(["toybox: new spell"]);
  });
});

describe("keepTarget", () => {
  const targets = askTargets([gw("lab"), gw("other")], [sess("lab", "a1", { name: "fix tests" })]);
  it("keeps the chosen target while it is offered", () => {
    expect(keepTarget(targets, targets[1])?.value).toBe(targets[1].value);
    // a session that appears before it does not move the choice
    const more = askTargets([gw("lab"), gw("other")], [sess("lab", "a0"), sess("lab", "a1", { name: "fix tests" })]);
    expect(keepTarget(more, targets[1])?.value).toBe(targets[1].value);
  });
  it("keeps the chosen target while its gateway is down and after it is back", () => {
    const chosen = targets.find((t) => t.label === "lab: new session")!;
    const down = askTargets([gw("lab", "reconnecting"), gw("other")], []);
    const kept = keepTarget(down, chosen)!;
    expect(kept.value).toBe(chosen.value);
    expect(kept.unreachable).toContain("lab is not connected");
    const back = askTargets([gw("lab"), gw("other")], []);
    expect(keepTarget(back, kept)).toMatchObject({ value: chosen.value, unreachable: "" });
  });
  it("keeps a chosen target that is gone, saying so", () => {
    const gone = keepTarget(askTargets([gw("other")], []), targets[0])!;
    expect(gone.value).toBe(targets[0].value);
    expect(gone.unreachable).toContain("no longer listed");
  });
  it("shows the first reachable target while nothing was chosen", () => {
    expect(keepTarget(targets, undefined)?.value).toBe(targets[0].value);
    expect(keepTarget(askTargets([gw("lab", "reconnecting"), gw("other")], []), undefined)?.label).toBe("other: new session");
    expect(keepTarget([], undefined)).toBeUndefined();
  });
});

describe("result texts", () => {
  it("says the gateway confirmed", () => {
    expect(askResultText({ gateway: "lab", transport: "ws", session: "a1", status: "streaming", new_session: true }, dashboard, "fix the tests")).toBe(
      "lab: new session “fix the tests”: streaming (confirmed by the gateway)",
    );
    expect(askResultText({ gateway: "api", transport: "api", session: "run_1", status: "started", new_session: true }, apiServer, "clean up")).toBe(
      "api: new run “clean up”: started (confirmed by the gateway)",
    );
    expect(askResultText({ gateway: "lab", transport: "ws", session: "a1", status: "queued" }, dashboard, "fix tests")).toBe("lab: “fix tests”: queued after the running turn (confirmed by the gateway)");
    expect(firstWords("  run the tests and fix every one that fails, then push ")).toBe("run the tests and fix every one that…");
    expect(firstWords("clean up")).toBe("clean up");
    expect(stopResultText({ gateway: "lab", id: "a1", transport: "ws", outcome: "interrupted", message: "lab/a1: turn interrupted (confirmed by the gateway)" }, "fix tests")).toBe(
      "lab/a1: turn interrupted (confirmed by the gateway)",
    );
    // Without Herald's message the run is named, not given by its id.
    expect(stopResultText({ gateway: "lab", id: "a1", transport: "ws", outcome: "interrupted", message: "" }, "fix tests")).toBe("lab · fix tests: interrupted");
  });
});

describe("following a run by its id", () => {
  const ref = { gateway: "api", id: "run_c67e025d9f1b4e0a", transport: "api", name: "Untitled run" };
  it("says the run by its one name, never the id as typed", () => {
    expect(followingText(ref, [])).toBe("Following “Untitled run”.");
    expect(followingText(ref, [])).not.toContain("c67e025d");
  });
  it("says the name the run has now once the snapshot has it", () => {
    const sessions = [
      { gateway: "other", id: ref.id, name: "someone else's" },
      { gateway: "api", id: ref.id, name: "Untitled run, started 13:54" },
    ];
    expect(followingText(ref, sessions)).toBe("Following “Untitled run, started 13:54”.");
  });
});

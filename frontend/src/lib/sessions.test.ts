import { describe, expect, it } from "vitest";
import { explainUnseen, sessionState, sessionTip } from "./sessions";
import type { LiveGatewayView, LiveSessionView } from "./types";

const s = (extra: Partial<LiveSessionView>): LiveSessionView => ({ id: "s1", key: "20261203_080000_abc", shown_id: "20261203_080000_abc", name: "Nightly cleanup", status: "idle", messages: 2, followed: false, elsewhere: false, offered: false, declined: false, ...extra });

describe("sessionState", () => {
  it.each([
    [{ followed: true, status: "idle" }, "idle"],
    [{ followed: true, status: "working" }, "running"],
    [{ followed: true, status: "starting" }, "running"],
    [{ followed: true, status: "waiting" }, "waiting for you"],
    [{ followed: false, status: "idle" }, "idle"],
    [{ followed: false, status: "working" }, "not visible here"],
    [{ followed: false, status: "waiting" }, "not visible here"],
    [{ followed: true, elsewhere: true, status: "idle" }, "not visible here"],
  ] as [Partial<LiveSessionView>, string][])("%o is %s", (extra, want) => {
    expect(sessionState(s(extra)).words).toBe(want);
  });
});

describe("explainUnseen", () => {
  const g = (sessions: LiveSessionView[]): LiveGatewayView => ({ gateway: "lab", policy: "ask", sessions });
  it("explains once for every session that does not reach Herald", () => {
    const e = explainUnseen(g([s({ id: "a" }), s({ id: "b" }), s({ id: "c" })]))!;
    expect(e.plain).toContain("3 sessions here do not reach Herald");
    expect(e.plain).not.toMatch(/attach|client at a time|resume/);
    expect(e.why).toContain("one client at a time");
  });
  it("says nothing when every session reaches Herald", () => {
    expect(explainUnseen(g([s({ followed: true })]))).toBeUndefined();
  });
  it("offers Take back when another app took one", () => {
    expect(explainUnseen(g([s({ followed: true, elsewhere: true })]))!.plain).toContain("take back");
  });
});

describe("sessionTip", () => {
  it("holds the whole name, the id in its one form, the tool and the output", () => {
    expect(sessionTip(s({ tool: "terminal: ls", last_text: "done" }))).toBe("Nightly cleanup\nSession ID 20261203_080000_abc\n▶ terminal: ls\ndone");
  });
});

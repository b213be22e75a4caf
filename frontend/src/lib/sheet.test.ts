import { describe, expect, it } from "vitest";
import { SETTLED_MS, justAnswered, onSheet, settledFor, sheetRequest, showQueue } from "./sheet";
import type { Approval } from "./types";

const req = (key: string, state = "pending"): Approval =>
  ({ key, kind: "approval", gateway: "lab", session: "s1", command: key, choices: [], state, outcome: { at: "" } }) as unknown as Approval;

describe("the sheet", () => {
  it("keeps the request that was on screen once a stop cancelled it, not an older answer", () => {
    const sudo = req("lab/sudo", "resolved");
    const deploy = req("lab/deploy");
    // The sudo prompt was answered here, then "make deploy" waited on screen.
    let last: string | null = "lab/sudo";
    let current = sheetRequest([deploy], [sudo], null, last);
    expect(current?.key).toBe("lab/deploy");
    last = onSheet(last, current, [deploy]);
    // Stop: the gateway cancelled it; it is only in recent now.
    current = sheetRequest([], [{ ...deploy, state: "cancelled" }, sudo], null, last);
    expect(current?.key).toBe("lab/deploy");
    expect(current?.state).toBe("cancelled");
  });
  it("shows a waiting request before a settled one and remembers nothing for a settled one", () => {
    const a = req("lab/a", "resolved");
    const b = req("lab/b");
    expect(sheetRequest([b], [a], null, "lab/a")?.key).toBe("lab/b");
    expect(onSheet("lab/b", a, [b])).toBe("lab/b");
    expect(sheetRequest([], [], null, null)).toBeUndefined();
  });
  it("shows the selected request, waiting or settled", () => {
    const a = req("lab/a", "resolved");
    const b = req("lab/b");
    const c = req("lab/c");
    expect(sheetRequest([b, c], [a], "lab/c", null)?.key).toBe("lab/c");
    expect(sheetRequest([b, c], [a], "lab/a", null)?.key).toBe("lab/a");
  });
});

describe("the queue", () => {
  it("lists the one waiting request when the sheet shows a settled one the user selected", () => {
    const denied = req("lab/drop", "resolved");
    const waiting = req("lab/rm");
    const current = sheetRequest([waiting], [denied], "lab/drop", null);
    expect(current?.key).toBe("lab/drop");
    expect(showQueue([waiting], current)).toBe(true);
  });
  it("is not needed for the one waiting request on the sheet, and lists several", () => {
    const a = req("lab/a");
    const b = req("lab/b");
    expect(showQueue([a], a)).toBe(false);
    expect(showQueue([], undefined)).toBe(false);
    expect(showQueue([a, b], a)).toBe(true);
  });
});

describe("settled requests leave the sheet", () => {
  const at = "2026-12-03T10:00:00Z";
  const t0 = Date.parse(at);
  const a = (key: string) => req(key);
  const settled = (key: string, secs: number): Approval => ({ ...a(key), state: "resolved", outcome: { at: new Date(t0 - secs * 1000).toISOString(), choice: "once" } });
  it("counts how long a request has been settled", () => {
    expect(settledFor(a("w"), t0)).toBe(0);
    expect(settledFor(settled("r", 5), t0)).toBe(5000);
    expect(settledFor(settled("r", 9), t0) > SETTLED_MS).toBe(true);
  });
  it("lists the few answered in the last two minutes, not the one on the sheet", () => {
    const recent = [settled("a", 1), settled("b", 30), settled("c", 60), settled("d", 90), settled("e", 200)];
    expect(justAnswered(recent, "a", t0).map((x) => x.key)).toEqual(["b", "c", "d"]);
    expect(justAnswered(recent, undefined, t0).map((x) => x.key)).toEqual(["a", "b", "c"]);
    expect(justAnswered([a("w")], undefined, t0)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { onSheet, sheetRequest, showQueue } from "./sheet";
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

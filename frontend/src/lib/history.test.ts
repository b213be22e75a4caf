import { describe, expect, it } from "vitest";
import { onePerRequest, stateWords, withCommands } from "./history";
import type { HistoryEntry } from "./types";

const e = (key: string, state: string, display_command?: string): HistoryEntry => ({ seq: 0, kind: "updated", key, gateway: "lab", session: "s", command: display_command ?? "", display_command, state, at: "" });

describe("withCommands", () => {
  it("names what a cancellation cancelled", () => {
    const got = withCommands([e("lab/2", "cancelled"), e("lab/1", "resolved", "ls"), e("lab/2", "pending", "make deploy")]);
    expect(got.map((x) => x.display_command)).toEqual(["make deploy", "ls", "make deploy"]);
  });
  it("leaves an entry whose request is unknown as it is", () => {
    expect(withCommands([e("lab/9", "expired")])[0].display_command).toBeUndefined();
  });
});

describe("onePerRequest", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 11, 3, 10, 0, s)).toISOString();
  const row = (key: string, state: string, s: number, extra: Partial<HistoryEntry> = {}): HistoryEntry => ({ seq: s, kind: "updated", key, gateway: "lab", session: "s", command: "", state, at: at(s), ...extra });
  it("keeps each request's latest entry, with its command", () => {
    const newestFirst = [
      row("k2", "pending", 9, { display_command: "ls" }),
      row("k1", "resolved", 5, { choice: "once", surface: "window" }),
      row("k1", "pending", 1, { display_command: "rm -rf ./build" }),
    ];
    const got = onePerRequest(newestFirst);
    expect(got.map((e) => [e.key, e.state, e.display_command])).toEqual([
      ["k2", "pending", "ls"],
      ["k1", "resolved", "rm -rf ./build"],
    ]);
    expect(stateWords(got[0].state)).toBe("waiting for an answer");
    expect(stateWords(got[1].state)).toBe("resolved");
  });
  it("keeps the session's name of the latest entry", () => {
    const got = onePerRequest([
      row("k1", "resolved", 5, { display_session: "Nightly backup check" }),
      row("k1", "pending", 1, { display_command: "ls", display_session: "Nightly backup check" }),
    ]);
    expect(got.map((e) => e.display_session)).toEqual(["Nightly backup check"]);
  });
});

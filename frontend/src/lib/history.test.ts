import { describe, expect, it } from "vitest";
import { withCommands } from "./history";
import type { HistoryEntry } from "./types";

const e = (key: string, state: string, display_command?: string): HistoryEntry => ({ key, gateway: "lab", session: "s", command: display_command ?? "", display_command, state, at: "" });

describe("withCommands", () => {
  it("names what a cancellation cancelled", () => {
    const got = withCommands([e("lab/2", "cancelled"), e("lab/1", "resolved", "ls"), e("lab/2", "pending", "make deploy")]);
    expect(got.map((x) => x.display_command)).toEqual(["make deploy", "ls", "make deploy"]);
  });
  it("leaves an entry whose request is unknown as it is", () => {
    expect(withCommands([e("lab/9", "expired")])[0].display_command).toBeUndefined();
  });
});

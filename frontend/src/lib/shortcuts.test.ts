import { describe, expect, it } from "vitest";
import { nextTab, shortcutFor } from "./shortcuts";
import { announcement, type Announceable } from "./announce";

describe("shortcutFor", () => {
  it.each([
    [{ key: "Escape" }, "close"],
    [{ key: "w", ctrlKey: true }, "hide"],
    [{ key: "W", ctrlKey: true }, "hide"],
    [{ key: "w", metaKey: true }, "hide"],
    [{ key: "q", ctrlKey: true }, "quit"],
    [{ key: "q", metaKey: true }, "quit"],
    [{ key: "w" }, undefined],
    [{ key: "q" }, undefined],
    [{ key: "q", ctrlKey: true, shiftKey: true }, undefined],
    [{ key: "w", ctrlKey: true, altKey: true }, undefined],
    [{ key: "Escape", ctrlKey: true }, undefined],
    [{ key: "Escape", isComposing: true }, undefined],
    [{ key: "q", ctrlKey: true, repeat: true }, undefined],
    [{ key: "o" }, undefined],
  ])("%o -> %s", (e, want) => {
    expect(shortcutFor(e)).toBe(want);
  });
});

const req = (key: string, cmd = "rm -rf /tmp/x", kind?: string): Announceable => ({
  key,
  kind,
  display: { gateway: "lab", first_line: cmd },
});

describe("announcement", () => {
  it("announces a new request once", () => {
    const seen = new Set<string>();
    expect(announcement(seen, [req("a")])).toBe("Approval needed on lab: rm -rf /tmp/x");
    expect(announcement(seen, [req("a")])).toBe("");
  });
  it("counts several new ones", () => {
    const seen = new Set<string>(["a"]);
    expect(announcement(seen, [req("a"), req("b"), req("c")])).toBe("2 new requests need you, 3 waiting in all.");
  });
  it("names questions apart from approvals", () => {
    expect(announcement(new Set(), [req("q", "Which branch?", "clarify")])).toBe("Hermes asks on lab: Which branch?");
  });
  it("forgets answered ones, so a key that comes back is news", () => {
    const seen = new Set<string>();
    announcement(seen, [req("a")]);
    expect(announcement(seen, [])).toBe("");
    expect(announcement(seen, [req("a")])).not.toBe("");
  });
  it("keeps the sentence short", () => {
    expect(announcement(new Set(), [req("a", "x".repeat(1000))]).length).toBeLessThan(200);
  });
});

describe("nextTab", () => {
  const tabs = ["live", "history", "add"] as const;
  it.each([
    ["live", "ArrowRight", "history"],
    ["add", "ArrowRight", "live"],
    ["live", "ArrowLeft", "add"],
    ["history", "Home", "live"],
    ["live", "End", "add"],
    ["history", "Enter", undefined],
  ] as const)("%s + %s -> %s", (from, key, want) => {
    expect(nextTab(tabs, from, key)).toBe(want);
  });
});

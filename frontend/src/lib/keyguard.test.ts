import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { KeyGuard, SETTLE_MS, typingInto } from "./keyguard";

const all = ["once", "session", "always", "deny"];

describe("KeyGuard", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-12-03T10:00:00Z"));
  });
  afterEach(() => vi.useRealTimers());

  it("is inert for SETTLE_MS after a new request appears", () => {
    const g = new KeyGuard();
    g.seen("lab/srq/1");
    expect(g.choice({ key: "o" }, all)).toBeUndefined();
    vi.advanceTimersByTime(SETTLE_MS - 1);
    expect(g.choice({ key: "o" }, all)).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(g.choice({ key: "o" }, all)).toBe("once");
    // The same request again (a snapshot refresh) does not re-arm.
    g.seen("lab/srq/1");
    expect(g.choice({ key: "d" }, all)).toBe("deny");
    // A second request appears: inert again.
    g.seen("lab/srq/1 lab/srq/2");
    expect(g.choice({ key: "d" }, all)).toBeUndefined();
    vi.advanceTimersByTime(SETTLE_MS);
    expect(g.choice({ key: "d" }, all)).toBe("deny");
  });

  it("is inert for SETTLE_MS after a focus change", () => {
    const g = new KeyGuard();
    vi.advanceTimersByTime(10 * SETTLE_MS);
    expect(g.choice({ key: "s" }, all)).toBe("session");
    g.arm(); // window focus, blur or visibility changed
    expect(g.choice({ key: "s" }, all)).toBeUndefined();
    vi.advanceTimersByTime(SETTLE_MS);
    expect(g.choice({ key: "s" }, all)).toBe("session");
  });

  it("ignores key repeat, modifiers and composition", () => {
    const g = new KeyGuard();
    vi.advanceTimersByTime(SETTLE_MS);
    expect(g.choice({ key: "o", repeat: true }, all)).toBeUndefined();
    for (const mod of ["ctrlKey", "altKey", "metaKey", "shiftKey", "isComposing"]) {
      expect(g.choice({ key: "o", [mod]: true }, all), mod).toBeUndefined();
    }
    expect(g.choice({ key: "O", shiftKey: true }, all)).toBeUndefined();
    expect(g.choice({ key: "o" }, all)).toBe("once");
  });

  it("lets through only offered choices", () => {
    const g = new KeyGuard();
    vi.advanceTimersByTime(SETTLE_MS);
    expect(g.choice({ key: "a" }, ["once", "deny"])).toBeUndefined();
    expect(g.choice({ key: "x" }, all)).toBeUndefined();
  });
});

describe("keys typed into a field", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-12-03T10:00:00Z"));
  });
  afterEach(() => vi.useRealTimers());

  it.each([["TEXTAREA"], ["INPUT"], ["SELECT"], ["textarea"]])("are no shortcut in a %s (typing \"go on\" in the quick prompt)", (tagName) => {
    const g = new KeyGuard();
    g.arm();
    vi.advanceTimersByTime(SETTLE_MS + 1);
    expect(g.choice({ key: "o", target: { tagName } }, all)).toBeUndefined();
    expect(g.choice({ key: "d", target: { tagName } }, all)).toBeUndefined();
  });
  it("are no shortcut in editable text", () => {
    const g = new KeyGuard();
    expect(g.choice({ key: "o", target: { tagName: "DIV", isContentEditable: true } }, all)).toBeUndefined();
  });
  it("still answer from the page itself", () => {
    const g = new KeyGuard();
    expect(g.choice({ key: "o", target: { tagName: "BODY" } }, all)).toBe("once");
    expect(g.choice({ key: "d", target: { tagName: "BUTTON" } }, all)).toBe("deny");
    expect(typingInto(null)).toBe(false);
  });
});

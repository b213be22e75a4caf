import { describe, expect, it } from "vitest";
import { forwarding, installForwarder } from "./forward";

describe("forwarding", () => {
  it("sends the method name and its arguments, undefined as null", async () => {
    const calls: [string, unknown[]][] = [];
    const app = forwarding({ Call: async (m, a) => (calls.push([m, a]), "ok") });
    expect(await app.Answer("k1", "once", undefined)).toBe("ok");
    await app.Snapshot();
    expect(calls).toEqual([
      ["Answer", ["k1", "once", null]],
      ["Snapshot", []],
    ]);
  });

  it("passes the daemon's error through", async () => {
    const app = forwarding({ Call: () => Promise.reject("no such approval") });
    await expect(app.Dismiss("x")).rejects.toBe("no such approval");
  });
});

describe("installForwarder", () => {
  it("installs WindowAPI over Window, and leaves a bound WindowAPI alone", () => {
    const g = globalThis as unknown as { window?: unknown };
    g.window ??= globalThis; // vitest runs in node
    const w = g.window as { go?: unknown };
    const fw = { Call: async () => 1 };
    w.go = { app: { Window: fw } };
    expect(installForwarder()).toBe(true);
    expect(typeof (w.go as { app: { WindowAPI: Record<string, unknown> } }).app.WindowAPI.Snapshot).toBe("function");
    const bound = { Snapshot: async () => 2 };
    w.go = { app: { WindowAPI: bound, Window: fw } };
    expect(installForwarder()).toBe(true);
    expect((w.go as { app: { WindowAPI: unknown } }).app.WindowAPI).toBe(bound);
    w.go = undefined;
    expect(installForwarder()).toBe(false);
  });
});

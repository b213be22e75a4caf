// @vitest-environment happy-dom
// The first run: with no gateway configured the live view welcomes, says
// what Herald does and what to do (the kinds in their drivers' words), and
// its "Add gateway" opens the form; it offers no sessions or prompt. A
// request that is waiting still takes the pinned sheet.
import { afterEach, describe, expect, it, vi } from "vitest";
import { flushSync, mount, tick, unmount } from "svelte";
import registered from "./lib/testdata/gatewaykinds.json";
import { hintParts } from "./lib/gatewayForm";
import type { Approval, GatewayView, Snapshot } from "./lib/types";
import { dashboard } from "./lib/testdata/transports";
import { pendingApproval, snapshotOf } from "./lib/testdata/snapshot";

const bridge = { snap: null as Snapshot | null, dismissed: [] as string[] };
vi.mock("./lib/bridge", () => ({
  api: {
    snapshot: async () => bridge.snap,
    dismissWarning: async (w: string) => {
      bridge.dismissed.push(w);
    },
    gatewayKinds: async () => registered,
    saveWindowState: async () => {},
  },
  on: () => () => {},
  message: (e: unknown) => String(e),
}));

import App from "./App.svelte";

const snapshot = (gateways: GatewayView[], approvals: Approval[] = []) => snapshotOf({ gateways, approvals });
const connected: GatewayView = { name: "lab", url: "http://127.0.0.1:9119", kind: "ws", state: "connected", may_have_missed_events: false, transport: dashboard };
const pending = pendingApproval("old", "A", "rm -rf /A");

const settle = async () => {
  for (let i = 0; i < 5; i++) {
    await tick();
    await Promise.resolve();
  }
  flushSync();
};

let view: ReturnType<typeof mount> | undefined;
async function open(s: Snapshot) {
  bridge.snap = s;
  const target = document.createElement("div");
  document.body.appendChild(target);
  view = mount(App, { target });
  await settle();
  return target;
}
afterEach(() => {
  if (view) unmount(view);
  view = undefined;
  document.body.innerHTML = "";
});

const headings = (t: HTMLElement) => [...t.querySelectorAll("h2")].map((h) => h.textContent?.trim());

describe("App first run (DOM)", () => {
  it("welcomes with what Herald does and what to do, in the drivers' words", async () => {
    const t = await open(snapshot([]));
    const w = t.querySelector<HTMLElement>('[data-testid="welcome"]');
    expect(w).not.toBeNull();
    const text = w!.textContent!.replace(/\s+/g, " ");
    expect(text).toContain("approval");
    for (const k of registered) {
      if (k.beside) {
        // A gateway's switch (the bridge), not a kind to start with.
        expect(text).not.toContain(k.title);
        continue;
      }
      expect(text).toContain(k.title);
      expect(text).toContain(k.hint);
      const usual = k.auth[0];
      if (!usual.hint) continue;
      // Where the secret comes from, its `code` parts shown as code.
      for (const p of hintParts(usual.hint)) {
        expect(text).toContain(p.text.replace(/\s+/g, " "));
        if (p.code) expect([...w!.querySelectorAll("code")].map((c) => c.textContent)).toContain(p.text);
      }
    }
    expect([...w!.querySelectorAll("code")].map((c) => c.textContent)).toContain("herald watch --demo");
    // Nothing to follow or prompt yet, and no "all clear" in its place.
    expect(headings(t)).not.toContain("Sessions");
    expect(t.querySelector('[aria-label="Quick prompt"]')).toBeNull();
    expect(t.querySelector('[data-testid="no-approvals"]')).toBeNull();
  });

  it("opens the Add gateway form from its button", async () => {
    const t = await open(snapshot([]));
    t.querySelector<HTMLButtonElement>('[data-testid="welcome-add"]')!.click();
    await settle();
    expect(t.querySelector("#tab-add")!.getAttribute("aria-selected")).toBe("true");
    const form = t.querySelector('form[aria-label="Add gateway"]');
    expect(form).not.toBeNull();
    // The form offers the same kinds.
    const offered = [...form!.querySelectorAll('input[name="kind"]')].map((i) => (i as HTMLInputElement).value);
    expect(offered).toEqual(registered.filter((k) => !k.beside).map((k) => k.kind));
    expect(t.querySelector('[data-testid="welcome"]')).toBeNull();
  });

  it("is gone once a gateway is configured: sessions and the quick prompt are back", async () => {
    const t = await open(snapshot([connected]));
    expect(t.querySelector('[data-testid="welcome"]')).toBeNull();
    expect(headings(t)).toContain("Sessions");
    expect(t.querySelector('[aria-label="Quick prompt"]')).not.toBeNull();
    expect(t.querySelector('[data-testid="no-approvals"]')).not.toBeNull();
  });

  it("gives the pinned sheet to a request still waiting without a gateway", async () => {
    const t = await open(snapshot([], [pending]));
    expect(t.querySelector('[data-testid="welcome"]')).toBeNull();
    const sheet = t.querySelector('[data-testid="requests"] .pane')!;
    expect(sheet.textContent).toContain("rm -rf /A");
  });

  it("lets a warning the user read be dismissed", async () => {
    const w = "your answer \"deny\" was sent to gateway lab, but the link dropped";
    const t = await open({ ...snapshot([connected]), warnings: [w] });
    const p = [...t.querySelectorAll<HTMLElement>("p.warn")].find((e) => e.textContent?.includes("link dropped"));
    expect(p).not.toBeUndefined();
    p!.querySelector<HTMLButtonElement>('button[aria-label="Dismiss this warning"]')!.click();
    await settle();
    expect(bridge.dismissed).toEqual([w]);
  });
});

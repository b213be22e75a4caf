// @vitest-environment happy-dom
// The gateway form, drawn from the kinds Go registers: it says where a
// secret comes from, holds still when a result or an error appears, says
// the truth about the keychain, keeps a stored secret on edit, detects the
// sign-in and tests what it would send.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { flushSync, mount, tick, unmount } from "svelte";
import registered from "../lib/testdata/gatewaykinds.json";
import type { AddGatewayRequest, GatewayFormView, ProbeResult, TestResult } from "../lib/types";

const calls: { method: string; args: unknown[] }[] = [];
const bridge = {
  sessionOnly: false,
  view: null as GatewayFormView | null,
  probe: { reachable: true, auth_required: true, suggested_auth: "password", version: "0.23.0" } as ProbeResult,
  test: { ok: true, stage: "handshake", message: "Connected" } as TestResult,
};
vi.mock("../lib/bridge", () => ({
  api: {
    snapshot: async () => ({ secrets_session_only: bridge.sessionOnly }),
    gatewayKinds: async () => registered,
    gatewayForm: async (name: string) => {
      calls.push({ method: "gatewayForm", args: [name] });
      return bridge.view;
    },
    probe: async (kind: string, url: string) => {
      calls.push({ method: "probe", args: [kind, url] });
      return bridge.probe;
    },
    test: async (req: AddGatewayRequest) => {
      calls.push({ method: "test", args: [req] });
      return bridge.test;
    },
    addGateway: async (req: AddGatewayRequest) => void calls.push({ method: "addGateway", args: [req] }),
    editGateway: async (name: string, req: AddGatewayRequest) => void calls.push({ method: "editGateway", args: [name, req] }),
  },
  message: (e: unknown) => String(e),
}));

import GatewayForm from "./GatewayForm.svelte";

const settle = async () => {
  for (let i = 0; i < 5; i++) {
    await tick();
    await Promise.resolve();
  }
  flushSync();
};

async function open(props: { editing?: string } = {}) {
  const target = document.createElement("div");
  document.body.appendChild(target);
  const done = vi.fn();
  const view = mount(GatewayForm, { target, props: { ...props, ondone: done } });
  await settle();
  const q = <T extends Element>(sel: string) => target.querySelector<T>(sel)!;
  const type = (sel: string, value: string) => {
    const el = q<HTMLInputElement>(sel);
    el.value = value;
    el.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
  };
  const button = (text: string) => [...target.querySelectorAll("button")].find((b) => b.textContent === text)!;
  const submit = async () => {
    q("form").dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    await settle();
  };
  return { target, q, type, button, submit, done, close: () => unmount(view) };
}

beforeEach(() => {
  calls.length = 0;
  bridge.sessionOnly = false;
  bridge.view = null;
});

describe("GatewayForm (DOM)", () => {
  it("offers every registered kind that stands on its own, the default checked, and nothing else", async () => {
    const f = await open();
    const radios = [...f.target.querySelectorAll<HTMLInputElement>('input[type="radio"]')];
    const own = registered.filter((k) => !k.beside);
    expect(own.length).toBeLessThan(registered.length); // the bridge is a gateway's switch, not a kind to add
    expect(radios.map((r) => r.value)).toEqual(own.map((k) => k.kind));
    expect(radios[0].checked).toBe(true);
    for (const k of own) expect(f.target.textContent).toContain(`${k.title} — ${k.hint}`);
    expect(f.q<HTMLInputElement>('input[size="40"]').value).toBe(registered[0].default_url);
    f.close();
  });

  it("edits a gateway added as a kind that rides beside, offering its own kind", async () => {
    const b = registered.find((k) => k.beside)!;
    const before = bridge.view;
    bridge.view = { name: "old-bridge", kind: b.kind, url: b.default_url, auth: b.auth[0].name, has_secret: true };
    try {
      const f = await open({ editing: "old-bridge" });
      const radios = [...f.target.querySelectorAll<HTMLInputElement>('input[type="radio"]')];
      expect(radios.map((r) => r.value)).toContain(b.kind);
      expect(radios.find((r) => r.value === b.kind)!.checked).toBe(true);
      f.close();
    } finally {
      bridge.view = before;
    }
  });

  it("says where the token comes from, with what to type as code", async () => {
    const f = await open();
    const hint = f.q('[data-testid="secret-hint"]');
    expect(hint.textContent).toContain("HERMES_DASHBOARD_SESSION_TOKEN=your-token hermes dashboard");
    expect([...hint.querySelectorAll("code")].map((c) => c.textContent)).toContain("window.__HERMES_SESSION_TOKEN__");
    f.close();
  });

  it("asks for the blank token instead of sending, and holds still", async () => {
    const f = await open();
    const form = f.q("form");
    const before = form.children.length;
    expect(f.q('[data-testid="test-result"]').textContent).toBe("");
    f.type('input[placeholder="homelab"]', "lab");
    await f.submit();
    expect(f.q('[role="alert"]').textContent).toBe("Enter the session token.");
    expect(calls.filter((c) => c.method === "addGateway")).toEqual([]);
    f.button("Test").click();
    await settle();
    expect(f.q('[data-testid="test-result"]').textContent).toContain("Connected");
    expect(form.children.length).toBe(before); // the result and the error took lines already there
    f.close();
  });

  it("says secrets are kept for this session only without a keychain", async () => {
    bridge.sessionOnly = true;
    const f = await open();
    expect(f.target.textContent).toContain("No system keychain is available: secrets are kept for this session only");
    f.close();
  });

  it("keeps the stored secret when an edit leaves the field empty", async () => {
    const api = registered.find((k) => k.title === "API server")!;
    bridge.view = { name: "runs", url: "http://h:8642", kind: api.kind, auth: "key", has_secret: true };
    const f = await open({ editing: "runs" });
    const secret = f.q<HTMLInputElement>('input[type="password"]');
    expect(secret.value).toBe("");
    expect(secret.placeholder).toMatch(/leave empty to keep/);
    expect(f.q<HTMLInputElement>(`input[value="${api.kind}"]`).checked).toBe(true);
    await f.submit();
    expect(calls.find((c) => c.method === "editGateway")?.args).toEqual(["runs", { name: "runs", url: "http://h:8642", kind: api.kind, auth: "key" }]);
    expect(f.done).toHaveBeenCalled();
    f.close();
  });

  it("offers the bridge only for kinds a driver rides beside, and sends it", async () => {
    const f = await open();
    for (const k of registered.filter((k) => !k.beside)) {
      const radio = f.q<HTMLInputElement>(`input[value="${k.kind}"]`);
      radio.checked = true;
      radio.dispatchEvent(new Event("change", { bubbles: true }));
      flushSync();
      const offer = f.target.querySelector('[data-testid="bridge-offer"]');
      expect(!!offer, k.kind).toBe(!!k.bridge);
      if (!k.bridge) continue;
      expect(offer!.textContent).toContain(k.bridge.offer);
      expect([...offer!.querySelectorAll("code")].map((c) => c.textContent)).toContain("herald bridge install");
    }
    const k = registered.find((k) => k.bridge)!;
    const radio = f.q<HTMLInputElement>(`input[value="${k.kind}"]`);
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    const box = f.q<HTMLInputElement>('[data-testid="bridge-offer"] input[type="checkbox"]');
    expect(box.checked).toBe(false);
    expect(box.disabled).toBe(!k.bridge!.auth.includes(k.auth[0].name));
    box.checked = true;
    box.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    f.type('input[placeholder="homelab"]', "lab");
    f.type('input[type="password"]', "tok");
    await f.submit();
    expect(calls.find((c) => c.method === "addGateway")?.args).toEqual([{ name: "lab", url: k.default_url, kind: k.kind, auth: k.auth[0].name, secret: "tok", bridge: true }]);
    f.close();
  });

  it("shows the gateway's bridge switch on edit, off where its sign-in cannot carry it", async () => {
    const k = registered.find((k) => k.bridge)!;
    const other = k.auth.find((m) => !k.bridge!.auth.includes(m.name))!;
    for (const [auth, usable] of [[k.bridge!.auth[0], true], [other.name, false]] as const) {
      bridge.view = { name: "lab", url: "http://h:9119", kind: k.kind, auth, username: "me", has_secret: true, bridge: true };
      const f = await open({ editing: "lab" });
      const box = f.q<HTMLInputElement>('[data-testid="bridge-offer"] input[type="checkbox"]');
      expect([box.checked, box.disabled], auth).toEqual([usable, !usable]);
      expect(f.q('[data-testid="bridge-offer"]').textContent!.includes("choose that sign-in to turn it on"), auth).toBe(!usable);
      await f.submit();
      const edits = calls.filter((c) => c.method === "editGateway");
      const sent = edits[edits.length - 1].args[1] as AddGatewayRequest;
      expect(sent.bridge, auth).toBe(usable ? true : undefined);
      f.close();
    }
  });

  it("detects the sign-in and asks for what it needs", async () => {
    const f = await open();
    f.type('input[size="40"]', "http://lab:9119");
    f.button("Detect sign-in").click();
    await settle();
    expect(calls.find((c) => c.method === "probe")?.args).toEqual([registered[0].kind, "http://lab:9119"]);
    expect(f.q<HTMLSelectElement>("select").value).toBe("password");
    expect(f.q('input[autocomplete="username"]')).not.toBeNull();
    expect(f.target.textContent).toContain("Hermes 0.23.0: sign in with the password");
    f.close();
  });

  it("tests and adds what the form shows, for a kind without detection", async () => {
    const api = registered.find((k) => !k.detect)!;
    const f = await open();
    const radio = f.q<HTMLInputElement>(`input[value="${api.kind}"]`);
    radio.checked = true;
    radio.dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    expect(f.button("Detect sign-in")).toBeUndefined();
    expect(f.q<HTMLInputElement>('input[size="40"]').value).toBe(api.default_url);
    f.type('input[placeholder="homelab"]', "runs");
    f.type('input[type="password"]', "k".repeat(20));
    f.button("Test").click();
    await settle();
    const want = { name: "runs", url: api.default_url, kind: api.kind, auth: api.auth[0].name, secret: "k".repeat(20) };
    expect(calls.find((c) => c.method === "test")?.args).toEqual([want]);
    await f.submit();
    expect(calls.find((c) => c.method === "addGateway")?.args).toEqual([want]);
    f.close();
  });
});

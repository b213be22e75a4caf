// @vitest-environment happy-dom
// The sheet in a DOM: state given for one request (the "I understand"
// tick for Always allow) is not carried over to another request shown on
// the same sheet.
import { describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";

const answers: string[] = [];
vi.mock("../lib/bridge", () => ({
  api: { answer: async (key: string, choice: string) => void answers.push(`${key} ${choice}`) },
  message: (e: unknown) => String(e),
}));

import ApprovalSheet from "./ApprovalSheet.svelte";
import type { Approval } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";

const req = (key: string, command: string): Approval => ({
  key,
  id: key,
  kind: "approval",
  transport: dashboard,
  gateway: "lab",
  session: "s1",
  command,
  display_command: command,
  display: { command, masked: "", first_line: command, gateway: "lab", session: "s1", session_id: "s1", lines: 1, expiry_known: true },
  choices: ["once", "session", "always", "deny"],
  received_at: "2026-12-03T10:00:00Z",
  expires_at: "2026-12-03T10:05:00Z",
  dialect: "server-request",
  state: "pending",
  outcome: { at: "2026-12-03T10:00:00Z" },
});

describe("ApprovalSheet (DOM)", () => {
  it("does not carry the Always-allow tick over to the next request", () => {
    const props = $state({ approval: req("lab/A", "rm -rf /A"), now: Date.parse("2026-12-03T10:00:00Z") });
    const target = document.createElement("div");
    document.body.appendChild(target);
    const sheet = mount(ApprovalSheet, { target, props });
    const tick = () => target.querySelector<HTMLInputElement>('input[type="checkbox"]')!;
    tick().click();
    flushSync();
    expect(tick().checked).toBe(true);

    props.approval = req("lab/B", "rm -rf /B"); // the user selects another request
    flushSync();
    expect(tick().checked).toBe(false);
    const always = [...target.querySelectorAll("button")].find((b) => b.textContent?.includes("Always allow"))!;
    always.click();
    flushSync();
    expect(answers).toEqual([]);
    expect(target.textContent).toContain("Tick “I understand”");
    unmount(sheet);
  });

  it("titles an approval Herald never saw for what it is: no command bar, no Copy, expiry unknown, deny only", () => {
    const r = req("lab/U", "");
    r.choices = ["deny"];
    r.display = { ...r.display, command: "", first_line: "", session: "Fix the build", unseen: true, title: "lab · Fix the build: may be waiting for approval", expiry_known: false };
    const target = document.createElement("div");
    document.body.appendChild(target);
    const sheet = mount(ApprovalSheet, { target, props: { approval: r, now: Date.parse("2026-12-03T10:00:00Z") } });
    flushSync();
    expect(target.querySelector('[data-testid="unseen-title"]')?.textContent).toBe("lab · Fix the build: may be waiting for approval");
    expect(target.querySelector('[data-testid="command"]')).toBeNull();
    expect(target.textContent).not.toContain("Copy command");
    expect(target.querySelector('[data-testid="countdown"]')?.textContent).toBe("expires: unknown");
    expect([...target.querySelectorAll("[data-testid^=choice-]")].map((b) => b.getAttribute("data-testid"))).toEqual(["choice-deny"]);
    unmount(sheet);
  });

  it("shows every field of an approval that is not a command, deny only, with its expiry", () => {
    const r = req("lab/F", "");
    r.choices = ["deny"];
    r.display = {
      ...r.display, command: "", first_line: "", session: "Sandbox", unseen: true, expiry_known: true,
      title: "lab · Sandbox: asks to approve something other than a command",
      fields: [{ name: "kind", value: "folder" }, { name: "path", value: "/home/ana/␛[2J" }],
    };
    const target = document.createElement("div");
    document.body.appendChild(target);
    const sheet = mount(ApprovalSheet, { target, props: { approval: r, now: Date.parse("2026-12-03T10:00:00Z") } });
    flushSync();
    const fields = target.querySelector('[data-testid="fields"]')!;
    expect([...fields.querySelectorAll("dt")].map((e) => e.textContent)).toEqual(["kind", "path"]);
    expect([...fields.querySelectorAll("dd")].map((e) => e.textContent)).toEqual(["folder", "/home/ana/␛[2J"]);
    expect(target.querySelector('[data-testid="fields-deny-only"]')).not.toBeNull();
    expect(target.querySelector('[data-testid="countdown"]')?.textContent).toContain("expires in");
    expect([...target.querySelectorAll("[data-testid^=choice-]")].map((b) => b.getAttribute("data-testid"))).toEqual(["choice-deny"]);
    unmount(sheet);
  });
});

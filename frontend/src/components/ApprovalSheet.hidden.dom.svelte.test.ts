// @vitest-environment happy-dom
// A command Hermes partly hid (display.hidden, issue 29): the sheet says
// what is hidden, and approving it needs a tick that names it; deny does
// not. The tick belongs to the request it was given on.
import { beforeEach, describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";

const answers: string[] = [];
vi.mock("../lib/bridge", () => ({
  api: {
    answer: async (key: string, choice: string) => void answers.push(`${key} ${choice} via answer`),
    answerConfirmed: async (key: string, choice: string, c: { always?: boolean; hidden?: boolean }) =>
      void answers.push(`${key} ${choice} always=${!!c.always} hidden=${!!c.hidden}`),
  },
  message: (e: unknown) => String(e),
}));

import ApprovalSheet from "./ApprovalSheet.svelte";
import type { Approval } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";

const marker = "Hermes hid part of this command: the value after GH_TOKEN=";

const req = (key: string, command: string, hidden?: string): Approval => ({
  key,
  id: key,
  kind: "approval",
  transport: dashboard,
  gateway: "lab",
  session: "s1",
  command,
  display_command: command,
  display: { command, hidden, masked: "", first_line: command, gateway: "lab", session: "s1", session_id: "s1", lines: 1, expiry_known: true },
  choices: ["once", "session", "always", "deny"],
  received_at: "2026-12-03T10:00:00Z",
  expires_at: "2026-12-03T10:05:00Z",
  dialect: "server-request",
  state: "pending",
  outcome: { at: "2026-12-03T10:00:00Z" },
});

function sheet(approval: Approval) {
  const props = $state({ approval, now: Date.parse("2026-12-03T10:00:00Z") });
  const target = document.createElement("div");
  document.body.appendChild(target);
  const s = mount(ApprovalSheet, { target, props });
  flushSync();
  const button = (c: string) => target.querySelector<HTMLButtonElement>(`[data-testid="choice-${c}"]`)!;
  const tick = () => target.querySelector<HTMLInputElement>('[data-testid="confirm-hidden"]');
  return { props, target, button, tick, done: () => unmount(s) };
}

describe("ApprovalSheet: a command Hermes partly hid", () => {
  beforeEach(() => void answers.splice(0));

  it("says what is hidden and that the command is not all of what runs", () => {
    const { target, done } = sheet(req("lab/A", "GH_TOKEN=*** git push --force origin feature", marker));
    const warn = target.querySelector('[data-testid="hidden"]')?.textContent ?? "";
    expect(warn).toContain(marker);
    expect(warn).toContain("not all of what will run");
    expect(target.querySelector('[data-testid="confirm-hidden"]')?.parentElement?.textContent).toContain("the value after GH_TOKEN=");
    done();
  });

  it("approves only with the tick, and sends the confirmation", async () => {
    const { target, button, tick, done } = sheet(req("lab/A", "GH_TOKEN=*** git push --force origin feature", marker));
    button("once").click();
    flushSync();
    expect(answers).toEqual([]);
    expect(target.querySelector(".err")?.textContent).toContain(marker);
    tick()!.click();
    flushSync();
    button("once").click();
    await Promise.resolve();
    expect(answers).toEqual(["lab/A once always=false hidden=true"]);
    done();
  });

  it("denies without the tick", async () => {
    const { button, done } = sheet(req("lab/A", "GH_TOKEN=*** git push --force origin feature", marker));
    button("deny").click();
    await Promise.resolve();
    expect(answers).toEqual(["lab/A deny always=false hidden=false"]);
    done();
  });

  it("does not carry the tick over to the next request", () => {
    const { props, button, tick, done } = sheet(req("lab/A", "A_TOKEN=*** x", "Hermes hid part of this command: the value after A_TOKEN="));
    tick()!.click();
    flushSync();
    props.approval = req("lab/B", "B_TOKEN=*** y", "Hermes hid part of this command: the value after B_TOKEN=");
    flushSync();
    expect(tick()!.checked).toBe(false);
    button("once").click();
    flushSync();
    expect(answers).toEqual([]);
    done();
  });

  it("asks nothing more of a command Hermes left alone", async () => {
    const { button, tick, target, done } = sheet(req("lab/C", "git push --force origin feature"));
    expect(tick()).toBeNull();
    expect(target.querySelector('[data-testid="hidden"]')).toBeNull();
    button("once").click();
    await Promise.resolve();
    expect(answers).toEqual(["lab/C once always=false hidden=false"]);
    done();
  });
});

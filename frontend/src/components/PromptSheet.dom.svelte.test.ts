// @vitest-environment happy-dom
// A password typed on the sheet for one request is not carried over when
// the sheet switches to another request (possibly another gateway's).
import { describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";

const sent: string[] = [];
vi.mock("../lib/bridge", () => ({
  api: {
    answer: async () => {},
    answerText: async (key: string, value: string) => void sent.push(`${key}=${value}`),
  },
  message: (e: unknown) => String(e),
}));

import PromptSheet from "./PromptSheet.svelte";
import type { Approval } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";

const sudo = (key: string, gateway: string): Approval => ({
  key,
  id: key,
  kind: "sudo",
  transport: dashboard,
  gateway,
  session: "s1",
  command: "sudo apt-get install jq",
  display_command: "sudo apt-get install jq",
  display: { command: "sudo apt-get install jq", masked: "", first_line: "", gateway, session: "s1", session_id: "s1", lines: 1, expiry_known: true },
  choices: [],
  received_at: "2026-12-03T10:00:00Z",
  expires_at: "2026-12-03T10:05:00Z",
  dialect: "event",
  state: "pending",
  outcome: { at: "2026-12-03T10:00:00Z" },
});

describe("PromptSheet (DOM)", () => {
  it("does not carry a typed password over to another request", () => {
    const props = $state({ approval: sudo("home/sudo/1", "home"), now: Date.parse("2026-12-03T10:00:00Z") });
    const target = document.createElement("div");
    document.body.appendChild(target);
    const sheet = mount(PromptSheet, { target, props });
    const field = () => target.querySelector<HTMLInputElement>('input[type="password"]')!;
    field().value = "home-password";
    field().dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();

    props.approval = sudo("work/sudo/2", "work"); // another gateway's prompt on the sheet
    flushSync();
    expect(field().value).toBe("");
    target.querySelector("form")!.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    flushSync();
    expect(sent).toEqual([]); // nothing typed for work: nothing sent
    unmount(sheet);
  });
});

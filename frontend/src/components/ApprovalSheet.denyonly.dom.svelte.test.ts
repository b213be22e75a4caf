// @vitest-environment happy-dom
// A request Herald accepts only deny for, whatever the reason Go gives in
// display.deny_only (here a command that lost bytes on the way, issue 29),
// is offered as deny only on the sheet: no Allow button, no shortcut.
import { describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";

vi.mock("../lib/bridge", () => ({ api: {}, message: (e: unknown) => String(e) }));

import ApprovalSheet from "./ApprovalSheet.svelte";
import type { Approval } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";

const why = "the command holds bytes that are not valid UTF-8 text, shown as ⟦U+FFFD⟧ (the gateway's JSON or Herald's decoder replaced them), so two different commands could look the same here";

describe("ApprovalSheet: deny only", () => {
  it("offers only deny when Go says the request is deny-only", () => {
    const a: Approval = {
      key: "lab/U",
      id: "U",
      kind: "approval",
      transport: dashboard,
      gateway: "lab",
      session: "s1",
      command: "rm -rf ./a\ufffd",
      display_command: "rm -rf ./a⟦U+FFFD⟧",
      display: { command: "rm -rf ./a⟦U+FFFD⟧", masked: "", first_line: "", gateway: "lab", session: "s1", session_id: "s1", lines: 1, expiry_known: true, markers: true, offered: ["deny"], deny_only: why },
      choices: ["once", "session", "always", "deny"],
      received_at: "2026-12-03T10:00:00Z",
      expires_at: "2026-12-03T10:05:00Z",
      dialect: "server-request",
      state: "pending",
      outcome: { at: "2026-12-03T10:00:00Z" },
    };
    const target = document.createElement("div");
    document.body.appendChild(target);
    const sheet = mount(ApprovalSheet, { target, props: { approval: a, now: Date.parse("2026-12-03T10:00:00Z") } });
    flushSync();
    expect([...target.querySelectorAll("[data-testid^=choice-]")].map((b) => b.getAttribute("data-testid"))).toEqual(["choice-deny"]);
    unmount(sheet);
  });
});

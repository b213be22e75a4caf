// @vitest-environment happy-dom
// "Copy command" (issue 29): a command with markers is copied as shown,
// markers and all, never its raw bytes (ESC, CR, bidi overrides,
// zero-width characters, ESC[201~ that ends a terminal's bracketed
// paste); a command without markers is copied as sent. The Go-made
// display text comes from the spoofing table every surface is tested on.
import { afterEach, describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";

vi.mock("../lib/bridge", () => ({ api: {}, message: (e: unknown) => String(e) }));

import ApprovalSheet from "./ApprovalSheet.svelte";
import type { Approval } from "../lib/types";
import spoofCases from "./testdata/spoofcases.json";

const copied: string[] = [];
Object.defineProperty(navigator, "clipboard", { value: { writeText: async (s: string) => void copied.push(s) }, configurable: true });

const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

function copy(a: Approval): { text: string; label: string } {
  copied.splice(0);
  const target = document.createElement("div");
  document.body.appendChild(target);
  const sheet = mount(ApprovalSheet, { target, props: { approval: a, now: Date.parse("2026-12-03T10:00:00Z") } });
  flushSync();
  const button = target.querySelector<HTMLButtonElement>('[data-testid="copy"]')!;
  const label = button.textContent ?? "";
  button.click();
  unmount(sheet);
  return { text: copied[0], label };
}

afterEach(() => {
  document.body.innerHTML = "";
});

describe("ApprovalSheet: Copy command", () => {
  for (const c of spoofCases) {
    const a = c.approval as unknown as Approval;
    if (a.display.unseen) continue;
    it(c.name, () => {
      const { text, label } = copy(a);
      if (a.display.markers) {
        expect(text).toBe(a.display.command);
        expect(text).not.toMatch(raw);
        expect(text).not.toContain("\u001b[201~");
        expect(label).toContain("as shown");
      } else {
        expect(text).toBe(a.command);
        expect(label).toBe("Copy command");
      }
    });
  }

  it("covers the raw bytes of the issue", () => {
    const names = spoofCases.filter((c) => c.approval.display.markers).map((c) => c.name);
    for (const n of ["erase line", "carriage return", "bidi override", "zero width", "bracketed paste end"]) expect(names).toContain(n);
  });
});

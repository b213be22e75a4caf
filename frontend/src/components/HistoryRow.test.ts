// A history row keeps the command, a prompt's question and the answer
// apart: "deny" after a command must not read as part of it.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import HistoryRow from "./HistoryRow.svelte";
import type { HistoryEntry } from "../lib/types";

const entry = (extra: Partial<HistoryEntry>): HistoryEntry => ({ seq: 1, kind: "updated", key: "lab/1", gateway: "lab", session: "s1", command: "", state: "resolved", at: "2026-12-03T10:00:00Z", ...extra });

describe("HistoryRow", () => {
  it("shows the choice outside the command", () => {
    const { body } = render(HistoryRow, { props: { e: entry({ command: "rm -rf ./build", display_command: "rm -rf ./build", display_choice: "deny" }) } });
    expect(body).toMatch(/<code[^>]*>rm -rf \.\/build<\/code>/);
    expect(body).toMatch(/data-testid="history-choice"[^>]*>→ deny</);
  });
  it("keeps a prompt's question apart from its command", () => {
    const { body } = render(HistoryRow, {
      props: { e: entry({ request_kind: "sudo", display_question: "sudo password", command: "sudo apt-get install jq", display_command: "sudo apt-get install jq" }) },
    });
    expect(body).not.toContain("sudo passwordsudo");
    expect(body).toMatch(/>sudo password<\/span>/);
    expect(body).toMatch(/<code[^>]*>sudo apt-get install jq<\/code>/);
  });
  it("shows gateway text as text", () => {
    const { body } = render(HistoryRow, { props: { e: entry({ display_command: "<img src=x onerror=alert(1)>", display_choice: "<b>once</b>" }) } });
    expect(body).not.toContain("<img");
    expect(body).not.toContain("<b>once");
  });
  it("names the session in its own cell, as text", () => {
    // Go sends the name shown as VisibleLine: a direction change is a marker.
    const { body } = render(HistoryRow, { props: { e: entry({ display_session: "evil⟦U+202E⟧gnp.exe <b>x</b>", display_command: "ls" }) } });
    expect(body).toMatch(/data-testid="history-session"[^>]*>evil⟦U\+202E⟧gnp\.exe &lt;b>x&lt;\/b><\/td>/);
    expect(body).not.toContain("\u202e");
    expect(body).not.toContain("<b>x");
  });
  it("says what Hermes hid of the command that ran", () => {
    const marker = "Hermes hid part of this command: the value after GH_TOKEN=";
    const { body } = render(HistoryRow, {
      props: { e: entry({ command: "GH_TOKEN=*** git push", display_command: "GH_TOKEN=*** git push", display_hidden: marker, display_choice: "once" }) },
    });
    expect(body).toMatch(/<code[^>]*>GH_TOKEN=\*\*\* git push<\/code>/);
    expect(body).toMatch(/data-testid="history-hidden"[^>]*>Hermes hid part of this command: the value after GH_TOKEN=: the command that ran was not all shown</);
  });
  it("leaves the session cell empty when the entry names none", () => {
    const { body } = render(HistoryRow, { props: { e: entry({ display_command: "ls" }) } });
    expect(body).toMatch(/data-testid="history-session"[^>]*><\/td>/);
  });
});

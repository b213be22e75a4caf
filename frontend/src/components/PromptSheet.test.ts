// The prompt sheet rendered on the server side: who asks what, clarify
// choices as buttons plus free text, passwords and secrets only through a
// masked field; gateway text always as text.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import PromptSheet from "./PromptSheet.svelte";
import type { Approval } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";

function prompt(kind: "clarify" | "sudo" | "secret", extra: Partial<Approval> = {}): Approval {
  return {
    key: `lab/${kind}/1`,
    id: "1",
    kind,
    transport: dashboard,
    gateway: "lab",
    session: "s1",
    command: "",
    display_command: "",
    display: { command: "", masked: "", first_line: "", gateway: "lab", session: "s1", session_id: "s1", lines: 0, expiry_known: true },
    choices: [],
    received_at: "2026-12-03T10:00:00Z",
    expires_at: "2026-12-03T10:02:00Z",
    dialect: "event",
    state: "pending",
    outcome: { at: "2026-12-03T10:00:00Z" },
    ...extra,
  };
}
const now = Date.parse("2026-12-03T10:00:00Z");

describe("PromptSheet", () => {
  it("shows choices that differ only past a notification's or the tray's cut whole, each on its own button", () => {
    const long = [
      "Remove the temporary build artifacts in ./build, keep the rest (safe)",
      "Remove the temporary build artifacts in ./build, keep the rest (safe) and then also delete ~/projects",
    ];
    const a = prompt("clarify", {
      question: "Clean up?",
      choices: long,
      display: { command: "", masked: "", first_line: "", gateway: "lab", session: "s1", session_id: "s1", lines: 0, expiry_known: true, question: "Clean up?", choices: long },
    });
    const { body } = render(PromptSheet, { props: { approval: a, now } });
    const buttons = [...body.matchAll(/data-testid="clarify-choice-(\d)"[^>]*>([^<]*)</g)].map((m) => m[2]);
    expect(buttons).toEqual(long);
  });
  it("shows a clarify question with its choices as buttons and a text field", () => {
    const a = prompt("clarify", {
      question: "Deploy <b>where</b>?",
      choices: ["dev", "prod"],
      display: { command: "", masked: "", first_line: "", gateway: "lab", session: "s1", session_id: "s1", lines: 0, expiry_known: true, question: "Deploy <b>where</b>?", choices: ["dev", "prod"] },
    });
    const { body } = render(PromptSheet, { props: { approval: a, now } });
    expect(body).toContain("Deploy &lt;b>where&lt;/b>?");
    expect(body).toContain('data-testid="clarify-choice-0"');
    expect(body).toContain('data-testid="clarify-choice-1"');
    expect(body).toContain('data-testid="text-input"');
    expect(body).not.toContain('type="password"');
    expect(body).toContain("lab");
    expect(body).toContain("s1");
  });

  it("asks a sudo password only through a masked field, saying who asks and why", () => {
    const a = prompt("sudo", { command: "sudo apt-get install jq", display: { command: "sudo apt-get install jq", masked: "", first_line: "", gateway: "lab", session: "s1", session_id: "s1", lines: 1, expiry_known: true } });
    const { body } = render(PromptSheet, { props: { approval: a, now } });
    expect(body).toContain('type="password"');
    expect(body).toContain('data-testid="secret-input"');
    expect(body).toContain('autocomplete="off"');
    expect(body).not.toContain('data-testid="text-input"');
    expect(body).not.toContain("clarify-choice");
    expect(body).toContain("sudo apt-get install jq");
    expect(body).toContain('data-testid="decline"');
  });

  it("names the secret's variable", () => {
    const a = prompt("secret", { env_var: "OPENWEATHER_API_KEY", prompt: "Your key", display: { command: "", masked: "", first_line: "", gateway: "lab", session: "s1", session_id: "s1", lines: 0, expiry_known: true, env_var: "OPENWEATHER_API_KEY", prompt: "Your key" } });
    const { body } = render(PromptSheet, { props: { approval: a, now } });
    expect(body).toContain("OPENWEATHER_API_KEY");
    expect(body).toContain('type="password"');
  });

  it("offers nothing to answer once the prompt ended", () => {
    const a = prompt("sudo", { state: "expired" });
    const { body } = render(PromptSheet, { props: { approval: a, now } });
    expect(body).not.toContain("secret-input");
    expect(body).toContain("the agent went on without an answer");
  });
});

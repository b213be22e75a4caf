// The sheet rendered on the server side (svelte/server): what the window
// shows of a hostile request is the Go-made display text, as text.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import ApprovalSheet from "./ApprovalSheet.svelte";
import type { Approval } from "../lib/types";
import { dashboard } from "../lib/testdata/transports";
// The Go spoofing table (approval/spooftest) as app sends it to the page;
// app's TestSpoofFixtureIsCurrent keeps it current.
import spoofCases from "./testdata/spoofcases.json";

const raw = 'rm -rf ~/important\u001b[2K\recho hello <img src=x onerror="alert(1)"> \u202e';
const hostile: Approval = {
  transport: dashboard,
  key: "lab/srq/1",
  id: "1",
  kind: "approval",
  gateway: "lab",
  session: "s\u001b[2K",
  command: raw,
  // as app.approvalView makes it (approval.Visible)
  display_command: 'rm -rf ~/important␛[2K⟦CR⟧echo hello <img src=x onerror="alert(1)"> ⟦U+202E⟧',
  display: {
    command: 'rm -rf ~/important␛[2K⟦CR⟧echo hello <img src=x onerror="alert(1)"> ⟦U+202E⟧',
    masked: "",
    first_line: "",
    description: "<b>why</b>",
    gateway: "lab",
    session: "s␛[2K",
    session_id: "s␛[2K",
    markers: true,
    lines: 1, expiry_known: true,
  },
  description: "<b>why</b>",
  choices: ["once", "deny"],
  received_at: "2026-12-03T10:00:00Z",
  expires_at: "2026-12-03T10:05:00Z",
  dialect: "server-request",
  state: "pending",
  outcome: { at: "2026-12-03T10:00:00Z" },
};

describe("ApprovalSheet", () => {
  const { body } = render(ApprovalSheet, { props: { approval: hostile, now: Date.parse("2026-12-03T10:00:00Z") } });

  it("shows the display text, never the raw command", () => {
    expect(body).toContain("rm -rf ~/important␛[2K⟦CR⟧echo hello");
    expect(body).toContain("⟦U+202E⟧");
    expect(body).toContain("s␛[2K");
    expect(body).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
  });

  it("renders it as text, never HTML", () => {
    expect(body).not.toContain("<img");
    expect(body).toContain("&lt;img src=x");
    expect(body).not.toContain("<b>why</b>");
  });

  it("warns about markers", () => {
    expect(body).toContain('data-testid="markers"');
  });

  it("offers every choice for a plain request", () => {
    expect(body).toContain('data-testid="choice-once"');
    expect(body).not.toContain('data-testid="truncated"');
  });

  for (const [name, extra] of [
    ["truncated", { truncated: true, command_bytes: 70000 }],
    ["conflicting", { conflict: 'the gateway sent different commands under the same request id "srq-1"' }],
    ["unbound", { unbound: "Herald restarted while this request waited, so it cannot prove that this is still the session's oldest waiting approval" }],
  ] as const) {
    it(`offers only deny for a ${name} request, and says why`, () => {
      const { body } = render(ApprovalSheet, { props: { approval: { ...hostile, ...extra }, now: Date.parse("2026-12-03T10:00:00Z") } });
      expect(body).not.toContain('data-testid="choice-once"');
      expect(body).toContain('data-testid="choice-deny"');
      expect(body).toContain(`data-testid="${name === "conflicting" ? "conflict" : name}"`);
    });
  }
});

// Every component's source, as text (Vite's import.meta.glob).
const sources = (import.meta as unknown as { glob: (p: string[], o: object) => Record<string, string> }).glob(["../**/*.svelte", "../*.svelte"], {
  query: "?raw",
  import: "default",
  eager: true,
});

describe("the window", () => {
  it("never renders gateway text as HTML ({@html} is not used)", () => {
    const files = Object.keys(sources);
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) expect(sources[f], f).not.toContain("{@html");
  });
});

// The HTML surface against the spoofing table every other surface runs:
// each hostile command renders as text that shows its dangerous part, no
// raw control, escape, invisible or direction-changing character reaches
// the page, and markers are announced.
describe("ApprovalSheet, the spoofing table", () => {
  const unescape = (s: string) =>
    s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  for (const c of spoofCases) {
    it(c.name, () => {
      const { body } = render(ApprovalSheet, { props: { approval: c.approval as unknown as Approval, now: Date.parse("2026-12-03T10:00:00Z") } });
      expect(body).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffd]/);
      // The page's own tags go; the gateway's text, escaped, stays.
      const text = unescape(body.replace(/<[^>]*>/g, "")).replace(/\n/g, "");
      for (const s of c.show) expect(text).toContain(s.replace(/\n/g, ""));
      if (c.approval.display.markers) expect(body).toContain('data-testid="markers"');
      if (c.hidden) expect(text).toContain(c.hidden);
    });
  }
});

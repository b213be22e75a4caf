// The Sessions panel rendered on the server side: one line per session
// (its name, its state in words, Follow / Unfollow / Take back), the
// explanation of what Herald cannot see once per gateway with the protocol
// behind "Why?", gateway text always as text.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import Sessions from "./Sessions.svelte";
import type { LiveSessionView, Snapshot } from "../lib/types";

function session(extra: Partial<LiveSessionView>): LiveSessionView {
  return { id: "s1", key: "20261203_080000_abc", shown_id: "20261203_080000_abc", name: "Nightly cleanup", status: "working", messages: 2, followed: false, elsewhere: false, offered: false, declined: false, ...extra };
}

function snap(sessions: LiveSessionView[], policy: "ask" | "auto" = "ask"): Snapshot {
  return {
    version: "test", gateways: [], sessions: [], approvals: [], recent: [], choices: [], notifications_paused: false, secrets_session_only: false, autostart: false, now: "2026-12-03T10:00:00Z",
    tray_missing: false, quit_without_tray: false, notify_run_finished: false,
    live: [{ gateway: "lab", policy, sessions }],
  };
}

const count = (body: string, s: string) => body.split(s).length - 1;

describe("Sessions", () => {
  it("shows one line per session: its name, its state in words and Follow", () => {
    const { body } = render(Sessions, { props: { snap: snap([session({ offered: true, status: "waiting", tool: "terminal: Running ls", last_text: "I will run <b>ls</b>" })]) } });
    expect(body).toContain("Nightly cleanup");
    expect(body).toContain("not visible here");
    expect(body).toContain('data-testid="follow-s1"');
    // The tool and the output are in the row's tooltip, as text.
    expect(body).toContain("▶ terminal: Running ls");
    expect(body).toContain("I will run &lt;b>ls&lt;/b>");
    expect(body).toContain("Session ID 20261203_080000_abc");
    // It never claims another client is there: that client may be gone.
    expect(body).toContain("may still be open or may be gone");
    expect(body).not.toContain('data-testid="take-back-s1"');
  });

  it("explains once per gateway, with the protocol behind Why?", () => {
    const three = [session({ id: "a", status: "idle" }), session({ id: "b", status: "idle" }), session({ id: "c", status: "idle" })];
    const { body } = render(Sessions, { props: { snap: snap(three) } });
    expect(count(body, 'data-testid="explain-lab"')).toBe(1);
    expect(body.match(/<summary[^>]*>Why\?<\/summary>/g)?.length).toBe(1);
    expect(count(body, 'class="session ')).toBe(3);
    expect(count(body, ">idle<")).toBe(3);
    expect(body).toContain("3 sessions here do not reach Herald");
    expect(body).toContain("stops receiving its live events");
    expect(body).toContain('data-testid="follow-all-lab"');
  });

  it("says a session another client took is not visible here, with Take back", () => {
    const { body } = render(Sessions, { props: { snap: snap([session({ followed: true, elsewhere: true })]) } });
    expect(body).toContain("not visible here");
    expect(body).toContain("nobody sees them if that client has closed since");
    expect(body).toContain('data-testid="take-back-s1"');
    expect(body).not.toContain('data-testid="unfollow-s1"');
    expect(body).not.toContain('data-testid="follow-all-lab"');
  });

  it("offers Unfollow for a followed session and shows the gateway's policy", () => {
    const { body } = render(Sessions, { props: { snap: snap([session({ followed: true })], "auto") } });
    expect(body).toContain('data-testid="unfollow-s1"');
    expect(body).toContain(">running<");
    expect(body).not.toContain('data-testid="explain-lab"');
    expect(body).toContain("follow automatically");
    expect(body).toContain("Herald follows each session it finds");
    // How the gateway behaves, in words, not which Hermes version does so.
    expect(body).toContain("sends each session's events to one client at a time");
    expect(body).not.toMatch(/Hermes \d|\b0\.\d+\.\d+/);
  });

  it("says when there are no sessions or no gateways", () => {
    expect(render(Sessions, { props: { snap: snap([]) } }).body).toContain("No live sessions.");
    const none = { ...snap([]), live: [] };
    expect(render(Sessions, { props: { snap: none } }).body).toContain("once a gateway is connected");
  });
});

// The Sessions panel rendered on the server side: titles instead of ids,
// status, tool and output; Follow / Unfollow / Take back by state; the
// offer and "followed elsewhere" texts; gateway text always as text.
import { describe, expect, it } from "vitest";
import { render } from "svelte/server";
import Sessions from "./Sessions.svelte";
import type { LiveSessionView, Snapshot } from "../lib/types";

function session(extra: Partial<LiveSessionView>): LiveSessionView {
  return { id: "s1", key: "20261203_080000_abc", name: "Nightly cleanup", status: "working", messages: 2, followed: false, elsewhere: false, offered: false, declined: false, ...extra };
}

function snap(sessions: LiveSessionView[], policy: "ask" | "auto" = "ask"): Snapshot {
  return {
    version: "test", gateways: [], sessions: [], approvals: [], recent: [], notifications_paused: false, secrets_session_only: false, autostart: false, now: "2026-12-03T10:00:00Z",
    tray_missing: false, quit_without_tray: false, notify_run_finished: false,
    live: [{ gateway: "lab", policy, sessions }],
  };
}

describe("Sessions", () => {
  it("shows titles, status, tool and latest output, and offers to follow", () => {
    const { body } = render(Sessions, { props: { snap: snap([session({ offered: true, status: "waiting", tool: "terminal: Running ls", last_text: "I will run <b>ls</b>" })]) } });
    expect(body).toContain("Nightly cleanup");
    expect(body).toContain("waiting on you");
    expect(body).toContain("terminal: Running ls");
    expect(body).toContain("I will run &lt;b>ls&lt;/b>");
    expect(body).toContain('data-testid="follow-s1"');
    expect(body).toContain('data-testid="offer-s1"');
    expect(body).toContain("stops receiving its live events");
    // It never claims another client is there: that client may be gone.
    expect(body).toContain("its events do not reach Herald");
    expect(body).toContain("may still be open or may be gone");
    expect(body).not.toContain("in another client.");
    expect(body).toContain('data-testid="follow-all-lab"');
    expect(body).not.toContain('data-testid="take-back-s1"');
  });

  it("names an offered session's own status, never running for an idle one", () => {
    for (const [status, lead] of [["idle", "Idle,"], ["working", "Running,"], ["waiting", "Waits for an answer,"]]) {
      const { body } = render(Sessions, { props: { snap: snap([session({ offered: true, status })]) } });
      expect(body).toContain(lead + " and its events do not reach Herald");
    }
  });

  it("says followed elsewhere now, with Take back", () => {
    const { body } = render(Sessions, { props: { snap: snap([session({ followed: true, elsewhere: true })]) } });
    expect(body).toContain('data-testid="elsewhere-s1"');
    expect(body).toContain("Followed elsewhere now");
    expect(body).toContain("nobody sees them if that client has closed since");
    expect(body).toContain('data-testid="take-back-s1"');
    expect(body).not.toContain('data-testid="unfollow-s1"');
    expect(body).not.toContain('data-testid="follow-all-lab"');
  });

  it("offers Unfollow for a followed session and shows the gateway's policy", () => {
    const { body } = render(Sessions, { props: { snap: snap([session({ followed: true })], "auto") } });
    expect(body).toContain('data-testid="unfollow-s1"');
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

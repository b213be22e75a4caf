// @vitest-environment happy-dom
// An API server's card lists its stored sessions by name, and says once,
// in plain words, what a turn sent to one cannot do on that server.
import { describe, expect, it, vi } from "vitest";
import { flushSync, mount, unmount } from "svelte";

vi.mock("../lib/bridge", () => ({
  api: {},
  message: (e: unknown) => (e instanceof Error ? e.message : String(e)),
}));

import Gateways from "./Gateways.svelte";
import { stored } from "../lib/stored.svelte";
import type { Snapshot } from "../lib/types";
import { apiServer } from "../lib/testdata/transports";

const note = "This API server cannot ask for your approval in a turn sent to a session, nor stop one.";

const snap: Snapshot = {
  version: "test",
  gateways: [{ name: "api", url: "", kind: "api", state: "connected", may_have_missed_events: false, transport: apiServer }],
  sessions: [{ gateway: "api", id: "run_9", stored_id: "s2", name: "Deploy notes", running: true, updated: "", started: "" }],
  approvals: [],
  recent: [],
  notifications_paused: false,
  secrets_session_only: true,
  autostart: false,
  now: "2026-12-03T10:00:00Z",
  live: [],
  tray_missing: false,
  quit_without_tray: false,
  notify_run_finished: false,
  choices: [],
};

describe("stored sessions on the API server's card (DOM)", () => {
  it("lists them by name, marks Herald's running turn and states the note once", () => {
    stored.api = {
      list: {
        gateway: "api",
        note,
        sessions: [
          { id: "s1", shown_id: "s1", name: "Release checklist", messages: 4, last_active: "" },
          { id: "s2", shown_id: "s2", name: "Deploy notes", messages: 2, last_active: "", turn: "run_9" },
        ],
      },
    };
    const target = document.createElement("div");
    const view = mount(Gateways, { target, props: { snap } });
    flushSync();
    const list = target.querySelector('[data-testid="stored-api"]')!;
    expect(list.textContent).toContain("Release checklist");
    expect(list.textContent).toContain("4 messages");
    expect(list.textContent).toContain("Deploy notes");
    expect(list.textContent).toContain("turn running");
    expect(target.textContent!.split(note).length - 1).toBe(1);
    // Herald's turn shows under the card with its Stop, named as its session.
    expect(target.querySelector('[data-testid="stop-api-run_9"]')).not.toBeNull();
    unmount(view);
    delete stored.api;
  });

  it("says why a listing failed, next to the list", () => {
    stored.api = { error: "this API server does not serve sessions (GET /api/sessions is not there)" };
    const target = document.createElement("div");
    const view = mount(Gateways, { target, props: { snap } });
    flushSync();
    expect(target.querySelector('[data-testid="stored-api"] [role="alert"]')?.textContent).toContain("does not serve sessions");
    unmount(view);
    delete stored.api;
  });
});

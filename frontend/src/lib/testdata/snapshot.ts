// Window data for tests: a snapshot with nothing in it but what a test
// gives, and a pending approval on the dashboard transport.
import type { Approval, Snapshot } from "../types";
import { dashboard } from "./transports";

/** A snapshot of a Herald with no gateway, no session and no request,
 *  plus what extra sets. */
export function snapshotOf(extra: Partial<Snapshot> = {}): Snapshot {
  return {
    version: "test",
    gateways: [],
    sessions: [],
    approvals: [],
    recent: [],
    choices: [],
    notifications_paused: false,
    secrets_session_only: false,
    autostart: false,
    now: "2026-12-03T10:00:00Z",
    live: [],
    tray_missing: false,
    quit_without_tray: false,
    notify_run_finished: false,
    ...extra,
  };
}

/** An approval of command waiting on gateway's session s1, received at
 *  10:00 and expiring at 10:05. */
export function pendingApproval(gateway: string, id: string, command: string): Approval {
  return {
    key: `${gateway}/${id}`,
    id,
    kind: "approval",
    transport: dashboard,
    gateway,
    session: "s1",
    command,
    display_command: command,
    display: { command, masked: "", first_line: command, gateway, session: "s1", session_id: "s1", lines: 1, expiry_known: true },
    choices: ["once", "session", "always", "deny"],
    received_at: "2026-12-03T10:00:00Z",
    expires_at: "2026-12-03T10:05:00Z",
    dialect: "server-request",
    state: "pending",
    outcome: { at: "2026-12-03T10:00:00Z" },
  };
}

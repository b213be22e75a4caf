// Pure display helpers, unit-tested in format.test.ts.
import type { Approval } from "./types";
import { choiceLabel } from "./choices";

/** m:ss until expiry, "expired" at or after it. */
export function countdown(expiresAt: string, now: number): string {
  const ms = Date.parse(expiresAt) - now;
  if (!(ms > 0)) return "expired";
  const s = Math.ceil(ms / 1000);
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

/** What happened to a request, for people; distinct outcomes stay
 *  distinct. A stopped conversation is said in its transport's words. */
export function outcomeText(a: Approval): string {
  const o = a.outcome;
  switch (a.state) {
    case "pending":
      return a.last_error ? `Not sent: ${a.last_error}` : a.uncertain ? "May still be pending" : "Waiting for you";
    case "answering":
      return `Sending “${label(o.choice)}”…`;
    case "resolved":
      return `${label(o.choice)} — confirmed by the gateway${o.surface ? ` (from ${o.surface})` : ""}`;
    case "expired":
      return a.kind && a.kind !== "approval" ? "Timed out — the agent went on without an answer" : "Timed out — the command did not run";
    case "cancelled":
      switch (o.reason) {
        case "resolved_elsewhere":
          return "Settled elsewhere";
        case "interrupted":
          return a.transport.interrupted;
        case "session_closed":
          return "Session closed";
        case "superseded":
          // Restored after a restart; the gateway now uses its id for
          // another command. It may still wait: the detail says where.
          return `No longer answerable here${o.detail ? `: ${o.detail}` : ""}`;
        case "dismissed":
          return "Dismissed";
        default:
          return `Withdrawn by the gateway${o.detail ? ` (${o.detail})` : ""}`;
      }
    case "failed":
      return `Cannot be answered here: ${o.error ?? "unknown error"}`;
    case "sent-unknown":
      // The detail says why (a dropped link, or a deny among approvals
      // waiting at once) and what the gateway said since.
      return o.detail
        ? `“${label(o.choice)}”: ${o.detail}`
        : `“${label(o.choice)}” sent, outcome unknown: the link dropped before the gateway confirmed it. Herald will not send it again`;
    case "outcome-unknown":
      return `“${label(o.choice)}” sent, outcome unknown${o.detail ? ` (${o.detail})` : ""}`;
    default:
      return a.state; // a state this window does not know: say it as it is
  }
}

function label(c?: string): string {
  return choiceLabel(c);
}

/** Human text for a gateway connection state. */
export function stateText(state: string): string {
  return (
    {
      idle: "Not started",
      connecting: "Connecting…",
      syncing: "Catching up…",
      connected: "Connected",
      reconnecting: "Reconnecting…",
      auth_failed: "Sign in again",
      config_error: "Check settings",
      stopped: "Stopped",
    }[state] ?? state
  );
}

/** Words for why events may have been missed (the code stays in a
 *  tooltip, for a bug report). */
export function missedText(reason: string | undefined): string {
  switch (reason) {
    case "no-replay":
      return "this gateway cannot send what happened while Herald was away";
    case "epoch":
      return "the gateway restarted";
    case "new-runtime":
      return "the session was restarted on the gateway";
    case "truncated":
      return "the gateway no longer holds everything that happened while Herald was away";
    case "resume-failed":
      return "following the session again failed";
    case "replay-failed":
      return "fetching what happened while Herald was away failed";
    default:
      return reason ? "the connection was interrupted" : "";
  }
}

/** Words for the step of Test that failed (the code stays in a tooltip). */
export function testStageText(stage: string): string {
  switch (stage) {
    case "http":
    case "address":
      return "reaching the gateway";
    case "tls":
      return "the secure connection";
    case "websocket":
      return "opening the live connection";
    case "handshake":
      return "the gateway's greeting";
    case "key":
      return "the API key";
    case "config":
      return "the settings";
    default:
      return stage;
  }
}

/**
 * A session's one name as Go named it (service.SessionNames: its title,
 * else its short id, shown as VisibleLine), for the gateway card and the
 * quick prompt; the Sessions panel and the history get the same name from
 * Go. The title and the id are only for a snapshot without it.
 */
export function sessionName(s: { name?: string; title?: string; id: string }): string {
  return s.name || s.title || s.id;
}

/** Text with its first letter in capitals ("run" → "Run"), for a word
 *  that starts a label. */
export function capitalized(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

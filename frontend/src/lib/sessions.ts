// The Sessions panel's words: pure helpers, unit-tested in
// sessions.test.ts.
import type { LiveGatewayView, LiveSessionView } from "./types";

/** A session's state in words, and its tone (for colour). */
export interface SessionState {
  words: "idle" | "running" | "waiting for you" | "not visible here";
  tone: "idle" | "running" | "waiting" | "unseen";
}

/** Whether the gateway lists the session as in a turn. */
function busy(s: LiveSessionView): boolean {
  return s.status === "working" || s.status === "running" || s.status === "starting" || s.status === "waiting";
}

/**
 * What a session is doing, in words: a session whose events reach Herald
 * (followed, not taken elsewhere) is "idle", "running" or "waiting for
 * you"; one whose events do not reach Herald is "idle" while the gateway
 * lists it idle, and "not visible here" while it runs or waits (Herald
 * cannot see what it asks, so it never says "running" as if it could).
 */
export function sessionState(s: LiveSessionView): SessionState {
  const seen = s.followed && !s.elsewhere;
  if (!seen) return busy(s) || s.elsewhere ? { words: "not visible here", tone: "unseen" } : { words: "idle", tone: "idle" };
  if (s.status === "waiting") return { words: "waiting for you", tone: "waiting" };
  if (busy(s)) return { words: "running", tone: "running" };
  return { words: "idle", tone: "idle" };
}

/** The row's tooltip: its id (the one form surfaces show it), what it
 *  runs now and its latest output. */
export function sessionTip(s: LiveSessionView): string {
  return [s.name, `Session ID ${s.shown_id || s.key || s.id}`, s.tool ? `▶ ${s.tool}` : "", s.last_text || s.preview || ""].filter(Boolean).join("\n");
}

/** The one explanation of a gateway's sessions whose events do not reach
 *  Herald: plain words, and the protocol detail for "Why?". */
export interface Explanation {
  plain: string;
  why: string;
}

/**
 * The explanation a gateway's panel shows once, when some of its sessions
 * do not reach Herald (not followed, or taken by another client); none
 * when every one does.
 */
export function explainUnseen(g: LiveGatewayView): Explanation | undefined {
  const unseen = g.sessions.filter((s) => !s.followed || s.elsewhere);
  if (unseen.length === 0) return undefined;
  const elsewhere = unseen.some((s) => s.elsewhere);
  const plain =
    (unseen.length === 1 ? "1 session here does" : `${unseen.length} sessions here do`) +
    " not reach Herald: what they ask goes to the app that opened them. Follow one to see its approvals here" +
    (elsewhere ? ", or take back one another app took." : ".");
  const why =
    "This gateway sends each session's events to one client at a time: the last that opened the session or sent it a prompt, which may still be open or may be gone. " +
    "Following a session here moves its live events to Herald, and a client still watching it then stops receiving its live events. " +
    "A session another client opened after Herald is followed elsewhere now: its approvals go there, and nobody sees them if that client has closed since.";
  return { plain, why };
}

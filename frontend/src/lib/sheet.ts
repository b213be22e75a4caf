// Which request the window's sheet shows.
import type { Approval } from "./types";

/**
 * The request on the sheet: the selected one (waiting or settled), else
 * the first waiting one, else the one last on the sheet, now settled.
 */
export function sheetRequest(approvals: Approval[], recent: Approval[], selected: string | null, last: string | null): Approval | undefined {
  return (
    approvals.find((a) => a.key === selected) ??
    recent.find((a) => a.key === selected) ??
    approvals[0] ??
    recent.find((a) => a.key === last)
  );
}

/**
 * The key to remember as last on the sheet: a waiting request shown now;
 * otherwise the one remembered. So when the request on screen goes away
 * (answered elsewhere, cancelled by a stop, expired) the sheet keeps it with
 * its outcome, not an older request answered here.
 */
export function onSheet(last: string | null, current: Approval | undefined, approvals: Approval[]): string | null {
  if (current && approvals.some((a) => a.key === current.key)) return current.key;
  return last;
}

/**
 * Whether the list of waiting requests shows above the sheet: when several
 * wait, and when one waits that is not the one on the sheet (the sheet
 * shows a settled request the user selected), so no waiting request is
 * ever hidden behind an outcome.
 */
export function showQueue(approvals: Approval[], current: Approval | undefined): boolean {
  return approvals.length > 1 || (approvals.length === 1 && approvals[0].key !== current?.key);
}

/** How long a settled request stays on the sheet by itself. */
export const SETTLED_MS = 8000;

/** How long ago a request settled (0 while it waits or is being sent). */
export function settledFor(a: Approval, now: number): number {
  if (a.state === "pending" || a.state === "answering") return 0;
  const at = Date.parse(a.outcome?.at ?? "");
  return Number.isNaN(at) ? 0 : Math.max(0, now - at);
}

/** How long a settled request stays in the "just answered" strip. */
export const ANSWERED_MS = 2 * 60_000;

/**
 * The "just answered" strip: the requests settled in the last two minutes
 * (newest first, as recent comes), but the one on the sheet, at most three.
 */
export function justAnswered(recent: Approval[], onSheet: string | undefined, now: number): Approval[] {
  return recent.filter((a) => a.key !== onSheet && settledFor(a, now) > 0 && settledFor(a, now) <= ANSWERED_MS).slice(0, 3);
}

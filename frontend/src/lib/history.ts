// The window's history list.
import type { HistoryEntry } from "./types";

/**
 * Entries with the command of their request filled in where the store
 * left it out (a cancellation or expiry records only the new state), so
 * no row reads "cancelled" without saying what was cancelled.
 */
export function withCommands(entries: HistoryEntry[]): HistoryEntry[] {
  const cmd = new Map<string, string>();
  for (const e of entries) if (e.display_command && !cmd.has(e.key)) cmd.set(e.key, e.display_command);
  return entries.map((e) => (e.display_command || !cmd.has(e.key) ? e : { ...e, display_command: cmd.get(e.key) }));
}

/**
 * One row per request, newest first (entries come newest first): the
 * request's latest entry, which carries its outcome, with its command
 * filled in. A request that arrived, was answered and confirmed is one
 * "resolved → once" row, not three rows of which one reads "pending".
 * Entries without a request key stay as they are.
 */
export function onePerRequest(entries: HistoryEntry[]): HistoryEntry[] {
  const seen = new Set<string>();
  const out: HistoryEntry[] = [];
  for (const e of withCommands(entries)) {
    if (e.key && seen.has(e.key)) continue;
    if (e.key) seen.add(e.key);
    out.push(e);
  }
  return out;
}

/** The state column in words: a request still waiting says so. */
export function stateWords(state: string): string {
  return state === "pending" ? "waiting for an answer" : state;
}

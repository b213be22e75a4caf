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

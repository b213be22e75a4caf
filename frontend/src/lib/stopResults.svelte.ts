// The outcome of each Stop, kept outside the Stop button: the button goes
// away when the run ends, which is exactly when the gateway confirmed the
// stop, so a result kept in the button would never be seen.

export interface StopOutcome {
  text: string;
  error: boolean;
}

export const stopResults = $state<Record<string, StopOutcome>>({});

/** The key of one run in stopResults. */
export function runKey(gateway: string, id: string): string {
  return `${gateway}\u0000${id}`;
}

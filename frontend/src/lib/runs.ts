// Run control and the quick prompt: pure helpers, unit-tested in
// runs.test.ts. The components (StopButton, QuickPrompt) only wire them up.
import type { AskResult, GatewayView, SessionView, StopResult, Transport } from "./types";
import { sessionName } from "./format";

/** Herald sends at most this many bytes of prompt (service.MaxPromptBytes). */
export const maxPromptBytes = 32 << 10;

/** Why a prompt cannot be sent, or "" when it can. */
export function promptProblem(text: string): string {
  const t = text.trim();
  if (t === "") return "Type what the agent should do.";
  const bytes = new TextEncoder().encode(t).length;
  if (bytes > maxPromptBytes) return `The prompt is ${bytes} bytes; Herald sends at most ${maxPromptBytes}.`;
  return "";
}

/** One place a quick prompt can go: a followed session, or a new session
 *  (or run: its gateway's transport names it). */
export interface AskTarget {
  value: string; // "gateway\u0000session" ("" session: a new one)
  label: string;
  gateway: string;
  session: string;
  transport: Transport;
}

/**
 * Where a quick prompt can go, as each gateway's transport offers it:
 * every session Herald follows on a connected gateway that takes prompts
 * in followed sessions (a dashboard's; an API server's runs cannot take a
 * second prompt), then a new session (or run) on each connected gateway
 * that starts one.
 */
export function askTargets(gateways: GatewayView[], sessions: SessionView[]): AskTarget[] {
  const up = gateways.filter((g) => g.state === "connected");
  const out: AskTarget[] = [];
  for (const g of up) {
    if (!g.transport.ask_followed) continue;
    for (const s of sessions.filter((s) => s.gateway === g.name)) {
      // Named as the session list names it, so the two can be matched.
      const name = sessionName(s);
      out.push({ value: `${g.name}\u0000${s.id}`, label: `${g.name}: ${name}${s.running ? " (running)" : ""}`, gateway: g.name, session: s.id, transport: g.transport });
    }
  }
  for (const g of up) {
    if (!g.transport.ask_new) continue;
    out.push({ value: `${g.name}\u0000`, label: `${g.name}: new ${g.transport.conversation}`, gateway: g.name, session: "", transport: g.transport });
  }
  return out;
}

/**
 * The target the quick prompt shows and sends to: the one chosen while it
 * is still offered, else the first. The select always shows this value, so
 * what is on screen is where the prompt goes.
 */
export function keepTarget(targets: AskTarget[], choice: string): string {
  return targets.some((t) => t.value === choice) ? choice : (targets[0]?.value ?? "");
}

/** What the window says once the gateway accepted a prompt sent to a
 *  gateway of transport t. */
export function askResultText(r: AskResult, t: Transport): string {
  const where = r.new_session ? `new ${t.conversation} ${r.session}` : `session ${r.session}`;
  const what = r.status === "queued" ? "queued after the running turn" : r.status;
  return `${r.gateway}: ${where}: ${what} (confirmed by the gateway)`;
}

/** What the window says after a stop the gateway confirmed. */
export function stopResultText(r: StopResult): string {
  return r.message || `${r.gateway}/${r.id}: ${r.outcome}`;
}

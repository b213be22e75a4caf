// Run control and the quick prompt: pure helpers, unit-tested in
// runs.test.ts. The components (StopButton, QuickPrompt) only wire them up.
import type { AskResult, GatewayView, RunRef, SessionView, StopResult, StoredSessions, Transport } from "./types";
import { sessionName, stateText } from "./format";

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
  /** Why a prompt cannot go there now ("" when it can). */
  unreachable: string;
}

/** Why nothing can be sent to gateway g now, in words ("" when it can). */
function downReason(g: GatewayView): string {
  return g.state === "connected" ? "" : `${g.name} is not connected (${stateText(g.state).replace(/…$/, "")}): Send waits until it is back.`;
}

/**
 * Where a quick prompt can go, as each gateway's transport offers it:
 * every session Herald follows on a gateway that takes prompts in followed
 * sessions (a dashboard's; an API server's runs cannot take a second
 * prompt), then each stored session an API server lists (stored: its last
 * listing, named as its card names it; not while a turn Herald sent to it
 * runs), then a new session (or run) on each gateway that starts one.
 * Gateways that are not connected stay listed, each target saying why it
 * cannot be reached, so the target the user chose never disappears.
 */
export function askTargets(gateways: GatewayView[], sessions: SessionView[], stored: Record<string, { list?: StoredSessions }> = {}): AskTarget[] {
  const out: AskTarget[] = [];
  for (const g of gateways) {
    if (!g.transport.ask_followed) continue;
    for (const s of sessions.filter((s) => s.gateway === g.name)) {
      // By its stored id where it has one: the same session after its
      // gateway restarted (a new live id) is the same target.
      const id = s.stored_id || s.id;
      if (out.some((t) => t.gateway === g.name && t.session === id)) continue;
      // Named as the session list names it, so the two can be matched.
      const name = sessionName(s);
      out.push({ value: `${g.name}\u0000${id}`, label: `${g.name}: ${name}${s.running ? " (running)" : ""}`, gateway: g.name, session: id, transport: g.transport, unreachable: downReason(g) });
    }
  }
  for (const g of gateways) {
    if (!g.transport.continues_sessions) continue;
    for (const s of stored[g.name]?.list?.sessions ?? []) {
      if (s.turn) continue;
      out.push({ value: `${g.name}\u0000${s.id}`, label: `${g.name}: ${s.name}`, gateway: g.name, session: s.id, transport: g.transport, unreachable: downReason(g) });
    }
  }
  for (const g of gateways) {
    if (!g.transport.ask_new) continue;
    out.push({ value: `${g.name}\u0000`, label: `${g.name}: new ${g.transport.conversation}`, gateway: g.name, session: "", transport: g.transport, unreachable: downReason(g) });
  }
  return out;
}

/**
 * The target the quick prompt shows and sends to: the one chosen, for as
 * long as the user does not choose another, even while it cannot be
 * reached (its gateway dropped) or is no longer listed (then it is kept as
 * it was last seen, saying so); the first reachable target only while
 * nothing was chosen. It never moves by itself: the select always shows
 * this target, and Send goes only there.
 */
export function keepTarget(targets: AskTarget[], chosen: AskTarget | undefined): AskTarget | undefined {
  if (chosen) {
    const now = targets.find((t) => t.value === chosen.value);
    if (now) return now;
    return { ...chosen, label: `${chosen.label} (gone)`, unreachable: `${chosen.label} is no longer listed (its gateway was removed or the session ended): choose another target.` };
  }
  return targets.find((t) => !t.unreachable) ?? targets[0];
}

/** A prompt's first words, as the session or run it starts is named
 *  (approval.FirstWords: eight words, "…" when cut). */
export function firstWords(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const cut = words.length > 8;
  let t = words.slice(0, 8).join(" ");
  if (t.length > 80) t = t.slice(0, 80);
  return cut || t.length < words.join(" ").length ? t + "…" : t;
}

/** What the window says once the gateway accepted a prompt sent to a
 *  gateway of transport t: the session or run by its one name (name),
 *  never by an id. */
export function askResultText(r: AskResult, t: Transport, name: string): string {
  const where = r.new_session ? `new ${t.conversation} “${name}”` : `“${name}”`;
  const what = r.status === "queued" ? "queued after the running turn" : r.status;
  return `${r.gateway}: ${where}: ${what} (confirmed by the gateway)`;
}

/** What the window says after a stop the gateway confirmed, of the run
 *  whose one name is name (Herald's message names it so already). */
export function stopResultText(r: StopResult, name: string): string {
  return r.message || `${r.gateway} · ${name}: ${r.outcome}`;
}

/** What the window says once Follow run ID followed a run: the run by its
 *  one name, as every surface names it (never the id as typed), the name
 *  it has now in the snapshot when it is there (it gets its start time
 *  with its first events), else the name Herald gave when following. */
export function followingText(ref: RunRef, sessions: Pick<SessionView, "gateway" | "id" | "name" | "title">[]): string {
  const s = sessions.find((x) => x.gateway === ref.gateway && x.id === ref.id);
  return `Following “${s ? sessionName(s) : ref.name || ref.id}”.`;
}

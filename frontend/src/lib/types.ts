// Shapes of what app/ sends (see app/snapshot.go). Times are RFC 3339.
import type { app } from "../../wailsjs/go/models";

/** A generated model (wailsjs/go/models.ts, `make bindings`) as JSON: its
 *  fields, all the way down, without the class's methods. */
export type Data<T> = 0 extends 1 & T
  ? T // any stays any
  : T extends (infer E)[]
    ? Data<E>[]
    : T extends object
      ? { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Data<T[K]> }
      : T;

export type AddGatewayRequest = Data<app.AddGatewayRequest>;
export type GatewayFormView = Data<app.GatewayFormView>;
export type GatewayKind = Data<app.GatewayKind>;
export type SignIn = Data<app.SignIn>;
export type ProbeResult = Data<app.ProbeResult>;
export type TestResult = Data<app.TestResult>;

export type Choice = "once" | "session" | "always" | "deny";

export interface Outcome {
  choice?: string;
  surface?: string;
  at: string;
  reason?: string;
  detail?: string;
  error?: string;
}

/** What to show of a request, made safe in Go (approval.Visible): every
 *  control, escape, invisible or direction-changing character is a visible
 *  marker. The window shows these fields, always as text. */
export interface Display {
  command: string;
  masked: string;
  first_line: string;
  description?: string;
  gateway: string;
  session: string;
  markers?: boolean;
  lines: number;
  question?: string;
  prompt?: string;
  env_var?: string;
  choices?: string[];
  /** An approval whose command Herald was never shown: titled by `title`,
   *  no command bar, nothing to copy, deny only. */
  unseen?: boolean;
  title?: string;
  /** False when Herald does not know when the gateway stops waiting. */
  expiry_known?: boolean;
}

/** What a request asks for: a command approval, or a prompt (clarify
 *  question, sudo password, secret value) that blocks the run. */
export type Kind = "approval" | "clarify" | "sudo" | "secret";

export interface Approval {
  key: string;
  kind?: Kind;
  /** clarify: the question (raw; show display.question) */
  question?: string;
  /** secret: what is asked and the variable it is stored as (raw) */
  prompt?: string;
  env_var?: string;
  gateway: string;
  session: string;
  stored_session?: string;
  command: string;
  display_command: string;
  display: Display;
  description?: string;
  choices: string[];
  received_at: string;
  expires_at: string;
  dialect: string;
  /** sent-unknown: Herald's answer was written and the link dropped before the gateway
   * confirmed it; outcome-unknown: Herald never learned whether it took effect. */
  state: "pending" | "answering" | "resolved" | "cancelled" | "expired" | "failed" | "sent-unknown" | "outcome-unknown";
  uncertain?: boolean;
  /** The gateway sent a longer command than Herald keeps: only deny. */
  truncated?: boolean;
  command_bytes?: number;
  /** Why Herald cannot tell which command an approval would run: only deny. */
  conflict?: string;
  /** Why Herald cannot bind an answer to this request (id-less gateway, proof of order lost): only deny. */
  unbound?: string;
  outcome: Outcome;
  last_error?: string;
}

export interface SessionView {
  gateway: string;
  id: string;
  stored_id?: string;
  title?: string;
  model?: string;
  running: boolean;
  tool?: string;
  status?: string;
  last_text?: string;
  tokens?: number;
  // The one name every surface gives the session (title, else stored id,
  // else a short id).
  name?: string;
}

export interface GatewayView {
  name: string;
  url: string;
  kind: string;
  state: string;
  error?: string;
  may_have_missed_events: boolean;
  missed_reason?: string;
  /** To whom the gateway sends a session's events, for people. */
  delivery?: string;
  delivery_evidence?: string;
  version?: string;
}

/** One live session as the gateway lists it (the Sessions panel). */
export interface LiveSessionView {
  id: string;
  key: string;
  name: string;
  status: string; // idle | working | waiting | starting
  preview?: string;
  tool?: string;
  last_text?: string;
  messages: number;
  followed: boolean;
  elsewhere: boolean;
  offered: boolean;
  declined: boolean;
}

export interface LiveGatewayView {
  gateway: string;
  policy: "ask" | "auto";
  error?: string;
  sessions: LiveSessionView[];
}

export interface Snapshot {
  version: string;
  gateways: GatewayView[];
  sessions: SessionView[];
  live?: LiveGatewayView[];
  approvals: Approval[];
  recent: Approval[];
  notifications_paused: boolean;
  secrets_session_only: boolean;
  autostart: boolean;
  // No tray host on this desktop, and what closing the window then does.
  tray_missing?: boolean;
  quit_without_tray?: boolean;
  // A notification for every finished turn (off by default).
  notify_run_finished?: boolean;
  now: string;
  /** Problems to show (notifications off, no tray, a gateway's setup). */
  warnings?: string[];
  audit_error?: string;
}

export interface HistoryEntry {
  key: string;
  gateway: string;
  session: string;
  command: string;
  masked_command?: string;
  display_command?: string;
  display_error?: string;
  display_gateway?: string;
  /** a prompt's kind and question, and its recorded answer (never a password or secret) */
  request_kind?: string;
  display_question?: string;
  display_choice?: string;
  /** the session's one name, as the card and the Sessions panel show it */
  display_session?: string;
  state: string;
  choice?: string;
  surface?: string;
  reason?: string;
  error?: string;
  at: string;
}

/** service.StopResult: what the gateway confirmed about a stop. */
export interface StopResult {
  gateway: string;
  id: string;
  transport: string;
  outcome: string; // interrupted | cancelled | completed | failed | not-running
  message: string;
}

/** service.AskResult: the gateway's answer to a quick prompt. */
export interface AskResult {
  gateway: string;
  transport: string;
  session: string;
  stored_session?: string;
  new_session?: boolean;
  status: string;
  note?: string;
}

/** service.RunRef: a run that can be stopped. */
export interface RunRef {
  gateway: string;
  id: string;
  stored_id?: string;
  transport: string;
  title?: string;
  tool?: string;
  status?: string;
}

// The window talks only to app/ through Wails' bindings (window.go.app.App)
// and runtime events. This is the one place that knows those names.
import { installForwarder } from "./forward";
import type { AddGatewayRequest, AskResult, GatewayFormView, HistoryEntry, ProbeResult, RunRef, Snapshot, StopResult, TestResult } from "./types";

type Bound = Record<string, (...args: unknown[]) => Promise<unknown>>;

function app(): Bound {
  installForwarder(); // the window as its own process (Linux): see forward.ts
  const w = window as unknown as { go?: { app?: { App?: Bound } } };
  const a = w.go?.app?.App;
  if (!a) throw new Error("Herald's backend is not available (not running inside Herald?)");
  return a;
}

function call<T>(name: string, ...args: unknown[]): Promise<T> {
  return app()[name](...args) as Promise<T>;
}

export const api = {
  snapshot: () => call<Snapshot>("Snapshot"),
  answer: (key: string, choice: string, confirmAlways = false) => call<void>("Answer", key, choice, confirmAlways),
  /** A clarify answer, sudo password or secret value ("" declines). */
  answerText: (key: string, value: string) => call<void>("AnswerText", key, value),
  dismiss: (key: string) => call<void>("Dismiss", key),
  reconnect: (name: string) => call<void>("Reconnect", name),
  history: (limit: number, gateway = "") => call<HistoryEntry[]>("History", limit, gateway),
  probe: (url: string) => call<ProbeResult>("ProbeGateway", url),
  test: (req: AddGatewayRequest) => call<TestResult>("TestGateway", req),
  addGateway: (req: AddGatewayRequest) => call<void>("AddGateway", req),
  gatewayForm: (name: string) => call<GatewayFormView>("GatewayForm", name),
  editGateway: (oldName: string, req: AddGatewayRequest) => call<void>("EditGateway", oldName, req),
  removeGateway: (name: string) => call<void>("RemoveGateway", name),
  setPause: (p: boolean) => call<void>("SetPauseNotifications", p),
  setAutostart: (on: boolean) => call<void>("SetAutostart", on),
  stopRun: (gateway: string, id: string) => call<StopResult>("StopRun", gateway, id),
  activeRuns: () => call<RunRef[]>("ActiveRuns"),
  ask: (gateway: string, session: string, text: string) => call<AskResult>("Ask", gateway, session, text),
  followSession: (gateway: string, id: string) => call<void>("FollowSession", gateway, id),
  unfollowSession: (gateway: string, id: string) => call<void>("UnfollowSession", gateway, id),
  followAll: (gateway: string) => call<number>("FollowAll", gateway),
  takeBack: (gateway: string, id: string) => call<void>("TakeBack", gateway, id),
  setFollowPolicy: (gateway: string, policy: string) => call<void>("SetFollowPolicy", gateway, policy),
};

type Runtime = { EventsOn: (name: string, cb: (...data: unknown[]) => void) => () => void };

/** Subscribe to a runtime event; returns the unsubscribe function. */
export function on<T>(name: string, cb: (data: T) => void): () => void {
  const rt = (window as unknown as { runtime?: Runtime }).runtime;
  if (!rt) return () => {};
  return rt.EventsOn(name, (d) => cb(d as T));
}

/** Errors from bound methods arrive as strings or Error objects. */
export function message(err: unknown): string {
  if (typeof err === "string") return err;
  if (err instanceof Error) return err.message;
  return String(err);
}

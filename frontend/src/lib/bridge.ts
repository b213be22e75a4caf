// The window talks only to app/ through the bindings Wails generates from
// app.WindowAPI's methods (frontend/wailsjs, `make bindings`) and runtime
// events. WindowAPI has exactly the methods called here (a Go test checks).
// This file keeps the names the components use as thin wrappers, typed with
// the generated models as plain data (./types).
// In the window process of the split model the bindings reach the always-on
// Herald through the forwarder (forward.ts), installed before every call.
import * as App from "../../wailsjs/go/app/WindowAPI";
import { EventsOn } from "../../wailsjs/runtime/runtime";
import { installForwarder } from "./forward";
import type { AddGatewayRequest, AskResult, Confirmed, GatewayFormView, GatewayKind, HistoryEntry, ProbeResult, RunRef, Snapshot, StopResult, StoredSessions, TestResult } from "./types";

/** Calls a generated binding once window.go.app.WindowAPI is there, its
 *  result typed as the plain data it is (./types). */
function typed<T>(call: () => Promise<unknown>): Promise<T> {
  if (!installForwarder()) return Promise.reject(new Error("Herald's backend is not available (not running inside Herald?)"));
  return call() as Promise<T>;
}

type Req = Parameters<typeof App.AddGateway>[0];

export const api = {
  snapshot: () => typed<Snapshot>(() => App.Snapshot()),
  answer: (key: string, choice: string, confirmAlways = false) => typed<void>(() => App.Answer(key, choice, confirmAlways)),
  /** An approval's choice with what the sheet had the user confirm:
   *  "always", and approving a command Hermes partly hid. */
  answerConfirmed: (key: string, choice: string, confirmed: Confirmed) => typed<void>(() => App.AnswerConfirmed(key, choice, confirmed)),
  /** A clarify answer, sudo password or secret value ("" declines). */
  answerText: (key: string, value: string) => typed<void>(() => App.AnswerText(key, value)),
  dismiss: (key: string) => typed<void>(() => App.Dismiss(key)),
  reconnect: (name: string) => typed<void>(() => App.Reconnect(name)),
  history: (limit: number, gateway = "") => typed<HistoryEntry[]>(() => App.History(limit, gateway)),
  /** The transports the gateway form offers, from their drivers. */
  gatewayKinds: () => typed<GatewayKind[]>(() => App.GatewayKinds()),
  probe: (kind: string, url: string) => typed<ProbeResult>(() => App.ProbeGateway(kind, url)),
  test: (req: AddGatewayRequest) => typed<TestResult>(() => App.TestGateway(req as Req)),
  addGateway: (req: AddGatewayRequest) => typed<void>(() => App.AddGateway(req as Req)),
  gatewayForm: (name: string) => typed<GatewayFormView>(() => App.GatewayForm(name)),
  editGateway: (oldName: string, req: AddGatewayRequest) => typed<void>(() => App.EditGateway(oldName, req as Req)),
  removeGateway: (name: string) => typed<void>(() => App.RemoveGateway(name)),
  setPause: (p: boolean) => typed<void>(() => App.SetPauseNotifications(p)),
  setAutostart: (on: boolean) => typed<void>(() => App.SetAutostart(on)),
  setQuitWithoutTray: (on: boolean) => typed<void>(() => App.SetQuitWithoutTray(on)),
  dismissTrayNotice: () => typed<void>(() => App.DismissTrayNotice()),
  /** Closes a warning the user read; it does not come back. */
  dismissWarning: (msg: string) => typed<void>(() => App.DismissWarning(msg)),
  setNotifyRunFinished: (on: boolean) => typed<void>(() => App.SetNotifyRunFinished(on)),
  stopRun: (gateway: string, id: string) => typed<StopResult>(() => App.StopRun(gateway, id)),
  activeRuns: () => typed<RunRef[]>(() => App.ActiveRuns()),
  ask: (gateway: string, session: string, text: string) => typed<AskResult>(() => App.Ask(gateway, session, text)),
  /** An API server's stored sessions (its card, the quick prompt). */
  storedSessions: (gateway: string) => typed<StoredSessions>(() => App.StoredSessions(gateway)),
  followSession: (gateway: string, id: string) => typed<void>(() => App.FollowSession(gateway, id)),
  /** The run followed, with its whole id and its one name. */
  followRun: (gateway: string, id: string) => typed<RunRef>(() => App.FollowRun(gateway, id)),
  unfollowSession: (gateway: string, id: string) => typed<void>(() => App.UnfollowSession(gateway, id)),
  followAll: (gateway: string) => typed<number>(() => App.FollowAll(gateway)),
  takeBack: (gateway: string, id: string) => typed<void>(() => App.TakeBack(gateway, id)),
  setFollowPolicy: (gateway: string, policy: string) => typed<void>(() => App.SetFollowPolicy(gateway, policy)),
  saveWindowState: () => typed<void>(() => App.SaveWindowState()),
  hideWindow: () => typed<void>(() => App.HideWindow()),
  quit: () => typed<void>(() => App.QuitApp()),
};

/** Subscribe to a runtime event; returns the unsubscribe function. Outside
 *  Herald (tests, a plain browser) there is no runtime: nothing arrives. */
export function on<T>(name: string, cb: (data: T) => void): () => void {
  if (!(window as unknown as { runtime?: unknown }).runtime) return () => {};
  return EventsOn(name, (d: unknown) => cb(d as T));
}

/** Errors from bound methods arrive as strings or Error objects. */
export function message(err: unknown): string {
  if (typeof err === "string") return err;
  if (err instanceof Error) return err.message;
  return String(err);
}

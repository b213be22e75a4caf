// The window's data is Go's: the bound methods send and take the types
// that `make bindings` generates from app/ into wailsjs/go/models.ts, and
// nothing here repeats their fields. This file only names them as the
// plain JSON they arrive as (the generated classes carry helper methods
// that a bound method's result does not have). Times are RFC 3339 strings
// (the generated models type them as any).
import type { app, approval, service, source } from "../../wailsjs/go/models";

/** A generated model as JSON: its fields, all the way down, without the
 *  class's methods. */
export type Data<T> = 0 extends 1 & T
  ? T // any stays any
  : T extends (infer E)[]
    ? Data<E>[]
    : T extends object
      ? { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Data<T[K]> }
      : T;

export type Snapshot = Data<app.Snapshot>;
export type GatewayView = Data<app.GatewayView>;
export type LiveGatewayView = Data<app.LiveGatewayView>;
export type LiveSessionView = Data<app.LiveSessionView>;
/** An approval or prompt as the window shows it (app.ApprovalView). */
export type Approval = Data<app.ApprovalView>;
export type Display = Data<approval.Display>;
/** What the user confirmed besides their choice (approval.Confirmed). */
export type Confirmed = Data<approval.Confirmed>;
export type HistoryEntry = Data<app.HistoryEntry>;
export type SessionView = Data<service.SessionView>;
export type AddGatewayRequest = Data<app.AddGatewayRequest>;
export type GatewayFormView = Data<app.GatewayFormView>;
export type GatewayKind = Data<app.GatewayKind>;
export type BridgeOffer = Data<app.BridgeOffer>;
/** What a gateway's transport calls its things and offers, from its
 *  driver: the window never decides by the kind. */
export type Transport = Data<app.Transport>;
export type SignIn = Data<app.SignIn>;
export type ProbeResult = Data<app.ProbeResult>;
export type TestResult = Data<app.TestResult>;
export type StopResult = Data<service.StopResult>;
export type AskResult = Data<service.AskResult>;
export type RunRef = Data<service.RunRef>;
/** One approval choice of the one table (source.ChoiceTable). */
export type ChoiceInfo = Data<source.ChoiceInfo>;
/** An API server's stored sessions (app.StoredSessionsUI). */
export type StoredSessions = Data<app.StoredSessionsUI>;
export type StoredSession = Data<app.StoredSessionUI>;

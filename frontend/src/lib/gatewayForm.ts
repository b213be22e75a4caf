// The Add/Edit gateway form's rules, kept out of the component so they are
// tested: which sign-ins a kind offers, its default address, what a valid
// form is, and what is sent (only the secret the sign-in needs; an empty
// secret on edit keeps the stored one). Everything about a kind comes from
// its Go driver through GatewayKinds: the form knows no kind by name.
import type { AddGatewayRequest, BridgeOffer, GatewayFormView, GatewayKind, SignIn } from "./types";

export interface FormState {
  name: string;
  kind: string;
  url: string;
  /** The sign-in (SignIn.name). */
  auth: string;
  /** The sign-in's secret; cleared when the sign-in changes. */
  secret: string;
  username: string;
  ca_file: string;
  /** Also follow the gateway's bridge (offered where GatewayKind.bridge). */
  bridge: boolean;
}

/** The kind named, or undefined when no driver has that name. */
export function kindNamed(kinds: GatewayKind[], kind: string): GatewayKind | undefined {
  return kinds.find((k) => k.kind === kind);
}

/** The kinds the form offers: on Add, not those that ride beside another
 *  kind's gateway (they are that gateway's switch); on Edit, also the
 *  gateway's own kind, whatever it is. */
export function offeredKinds(kinds: GatewayKind[], editingKind = ""): GatewayKind[] {
  return kinds.filter((k) => !k.beside || k.kind === editingKind);
}

/** The form's sign-in, if its kind offers it. */
export function signIn(kinds: GatewayKind[], f: FormState): SignIn | undefined {
  return kindNamed(kinds, f.kind)?.auth.find((m) => m.name === f.auth);
}

/** An empty form for a kind (the first, the default transport, unless
 *  named). */
export function blankForm(kinds: GatewayKind[], kind = kinds[0]?.kind ?? ""): FormState {
  const k = kindNamed(kinds, kind);
  return { name: "", kind, url: k?.default_url ?? "", auth: k?.auth[0]?.name ?? "", secret: "", username: "", ca_file: "", bridge: false };
}

/** What the form offers beside a gateway of the form's kind (its bridge,
 *  from the driver that rides beside it), or undefined. */
export function bridgeOffer(kinds: GatewayKind[], f: FormState): BridgeOffer | undefined {
  return kindNamed(kinds, f.kind)?.bridge;
}

/** Whether the bridge can be turned on with the form's sign-in (it signs
 *  in with the gateway's secret). */
export function bridgeUsable(kinds: GatewayKind[], f: FormState): boolean {
  return bridgeOffer(kinds, f)?.auth.includes(f.auth) ?? false;
}

/** Why the bridge cannot be turned on with this sign-in, or "". */
export function bridgeNeeds(kinds: GatewayKind[], f: FormState): string {
  const o = bridgeOffer(kinds, f);
  if (!o || bridgeUsable(kinds, f)) return "";
  const k = kindNamed(kinds, f.kind);
  const labels = o.auth.map((n) => lowerFirst(k?.auth.find((m) => m.name === n)?.label ?? n));
  return `The ${o.name} signs in with the gateway's ${labels.join(" or ")}: choose that sign-in to turn it on.`;
}

/** Switch the kind: the sign-in must be one the kind offers, and an
 *  untouched default address follows the kind. */
export function withKind(kinds: GatewayKind[], f: FormState, kind: string): FormState {
  const to = kindNamed(kinds, kind);
  if (!to) return f;
  let next: FormState = { ...f, kind };
  if (!to.auth.some((m) => m.name === f.auth)) next = withAuth(next, to.auth[0]?.name ?? "");
  if (f.url.trim() === "" || f.url === kindNamed(kinds, f.kind)?.default_url) next.url = to.default_url;
  return next;
}

/** Switch the sign-in: a secret typed for another one is not sent. */
export function withAuth(f: FormState, auth: string): FormState {
  return auth === f.auth ? f : { ...f, auth, secret: "" };
}

/** A configured gateway as the Edit form starts (secret blank). */
export function fromView(kinds: GatewayKind[], v: GatewayFormView): FormState {
  const kind = v.kind || kinds[0]?.kind || "";
  return { ...blankForm(kinds, kind), name: v.name, url: v.url, auth: v.auth, username: v.username ?? "", ca_file: v.ca_file ?? "", bridge: !!v.bridge };
}

/** A name as it reads mid-sentence: "Session token" becomes "session
 *  token", an acronym ("API key") stays. */
export function lowerFirst(s: string): string {
  return s.length > 1 && /[a-z]/.test(s[1]) ? s[0].toLowerCase() + s.slice(1) : s;
}

/** Why the form cannot be sent, or "" when it can. When editing, a stored
 *  secret may stay (hasSecret) and the field may be left empty. */
export function problem(kinds: GatewayKind[], f: FormState, editing = false, hasSecret = false): string {
  const k = kindNamed(kinds, f.kind);
  if (f.name.trim() === "") return "Give the gateway a name.";
  if (!k) return "Choose a kind.";
  if (f.url.trim() === "") return `Give the ${lowerFirst(k.title)}'s address (default ${k.default_url}).`;
  const m = signIn(kinds, f);
  if (!m) return "Choose a sign-in.";
  if (m.secret && f.secret === "" && !(editing && hasSecret)) return `Enter the ${lowerFirst(m.label)}.`;
  return "";
}

/** What is sent to app/: the secret and user name only where the sign-in
 *  takes them. */
export function toRequest(kinds: GatewayKind[], f: FormState): AddGatewayRequest {
  const req: AddGatewayRequest = { name: f.name.trim(), url: f.url.trim(), kind: f.kind, auth: f.auth };
  if (f.ca_file.trim() !== "") req.ca_file = f.ca_file.trim();
  const m = signIn(kinds, f);
  if (m?.username) req.username = f.username.trim();
  if (m?.secret && f.secret !== "") req.secret = f.secret; // "" on edit: keep the stored one
  if (f.bridge && bridgeUsable(kinds, f)) req.bridge = true; // only where it is offered
  return req;
}

/** A driver's hint in parts: `backquoted` parts are what to type or copy,
 *  shown as code (as text: a hint is never HTML). */
export function hintParts(hint: string): { text: string; code: boolean }[] {
  return hint
    .split("`")
    .map((text, i) => ({ text, code: i % 2 === 1 }))
    .filter((p) => p.text !== "");
}

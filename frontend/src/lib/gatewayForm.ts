// The Add/Edit gateway form's rules, kept out of the component so they are
// tested: which sign-ins each kind offers, the default address, what a
// valid form is, and what is sent (only the secret the sign-in needs; an
// empty secret on edit keeps the stored one).
import type { AddGatewayRequest, GatewayAuth, GatewayFormView, GatewayKind } from "./types";

export interface FormState {
  name: string;
  kind: GatewayKind;
  url: string;
  auth: GatewayAuth;
  token: string;
  username: string;
  password: string;
  key: string;
  ca_file: string;
}

export const defaultURL: Record<GatewayKind, string> = {
  ws: "http://127.0.0.1:9119",
  api: "http://127.0.0.1:8642",
};

/** The sign-ins a kind offers, first the usual one. */
export function authOptions(kind: GatewayKind): { value: GatewayAuth; label: string }[] {
  if (kind === "api") {
    return [
      { value: "key", label: "API key (API_SERVER_KEY)" },
      { value: "none", label: "None" },
    ];
  }
  return [
    { value: "token", label: "Session token (loopback)" },
    { value: "password", label: "Password (gated)" },
    { value: "none", label: "None" },
  ];
}

export function blankForm(kind: GatewayKind = "ws"): FormState {
  return { name: "", kind, url: defaultURL[kind], auth: authOptions(kind)[0].value, token: "", username: "", password: "", key: "", ca_file: "" };
}

/** Switch the kind: the sign-in must be one the kind offers, and an
 * untouched default address follows the kind. */
export function withKind(f: FormState, kind: GatewayKind): FormState {
  const next = { ...f, kind };
  if (!authOptions(kind).some((o) => o.value === f.auth)) next.auth = authOptions(kind)[0].value;
  if (f.url.trim() === "" || f.url === defaultURL[f.kind]) next.url = defaultURL[kind];
  return next;
}

/** A configured gateway as the Edit form starts (secrets blank). */
export function fromView(v: GatewayFormView): FormState {
  const kind: GatewayKind = v.kind === "api" ? "api" : "ws";
  return { ...blankForm(kind), name: v.name, url: v.url, auth: v.auth, username: v.username ?? "", ca_file: v.ca_file ?? "" };
}

/** The secret field the sign-in uses, or "" when it needs none. */
export function secretField(f: FormState): "token" | "password" | "key" | "" {
  return f.auth === "none" ? "" : f.auth;
}

/** Why the form cannot be sent, or "" when it can. When editing, a stored
 * secret may stay (hasSecret) and the field may be left empty. */
export function problem(f: FormState, editing = false, hasSecret = false): string {
  if (f.name.trim() === "") return "Give the gateway a name.";
  if (f.url.trim() === "") return f.kind === "api" ? "Give the API server's address (default " + defaultURL.api + ")." : "Give the gateway's address.";
  if (!authOptions(f.kind).some((o) => o.value === f.auth)) return "Choose a sign-in.";
  const field = secretField(f);
  if (field && f[field] === "" && !(editing && hasSecret)) {
    return { token: "Paste the session token.", password: "Type the password.", key: "Paste the API key (API_SERVER_KEY from ~/.hermes/.env)." }[field];
  }
  return "";
}

/** What is sent to app/: only the secret the sign-in uses. */
export function toRequest(f: FormState): AddGatewayRequest {
  const req: AddGatewayRequest = { name: f.name.trim(), url: f.url.trim(), kind: f.kind, auth: f.auth };
  if (f.ca_file.trim() !== "") req.ca_file = f.ca_file.trim();
  switch (f.auth) {
    case "token":
      req.token = f.token;
      break;
    case "password":
      req.username = f.username.trim();
      req.password = f.password;
      break;
    case "key":
      req.key = f.key;
      break;
  }
  return req;
}

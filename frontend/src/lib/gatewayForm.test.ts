import { describe, expect, it } from "vitest";
import { blankForm, offeredKinds, bridgeNeeds, bridgeOffer, bridgeUsable, fromView, hintParts, lowerFirst, problem, signIn, toRequest, withAuth, withKind } from "./gatewayForm";
import type { GatewayKind } from "./types";
// GatewayKinds as Go sends it, from the registered drivers (a Go test keeps
// this copy current): the form is tested against the real transports.
import registered from "./testdata/gatewaykinds.json";

const kinds: GatewayKind[] = registered;
const byTitle = (title: string) => kinds.find((k) => k.title === title)!;
const dashboard = byTitle("Dashboard gateway");
const apiServer = byTitle("API server");

// A transport the form has never heard of: it must work the same.
const toy: GatewayKind = {
  kind: "toy",
  title: "Toy transport",
  hint: "in memory",
  default_url: "toy://local",
  detect: false,
  auth: [{ name: "spell", label: "Toy spell", secret: "Spell", hint: "`sesame`" }, { name: "none", label: "None" }],
  transport: { conversation: "spell", interrupted: "Spell broken", lists_sessions: false, ask_new: true, ask_followed: false, follow_by_id: false, starts_runs: false, continues_sessions: false },
};
const withToy = [...kinds, toy];

describe("gateway kinds", () => {
  it("offers a kind that rides beside another only to edit a gateway of that kind", () => {
    const beside = kinds.filter((k) => k.beside);
    expect(beside.length).toBeGreaterThan(0); // the bridge rides beside the dashboard gateway
    const onAdd = offeredKinds(withToy);
    expect(onAdd.map((k) => k.kind)).toEqual(withToy.filter((k) => !k.beside).map((k) => k.kind));
    expect(onAdd).toContain(toy);
    expect(offeredKinds(kinds, beside[0].kind)).toContain(beside[0]);
    expect(offeredKinds(kinds, dashboard.kind)).not.toContain(beside[0]);
  });

  it("starts with the default transport, its address and usual sign-in", () => {
    const f = blankForm(kinds);
    expect(f).toMatchObject({ kind: kinds[0].kind, url: kinds[0].default_url, auth: kinds[0].auth[0].name, secret: "" });
    expect(kinds[0]).toBe(dashboard);
  });
  it("switching to the API server picks its key and its default port", () => {
    const f = withKind(kinds, blankForm(kinds), apiServer.kind);
    expect(f.auth).toBe(apiServer.auth[0].name);
    expect(signIn(kinds, f)?.label).toBe("API key");
    expect(f.url).toMatch(/:8642$/);
  });
  it("keeps an address the user typed when the kind changes", () => {
    const f = withKind(kinds, { ...blankForm(kinds), url: "https://hermes.lan:9119" }, apiServer.kind);
    expect(f.url).toBe("https://hermes.lan:9119");
  });
  it("keeps a sign-in both kinds offer, and its secret", () => {
    const f = withKind(kinds, { ...blankForm(kinds), auth: "none" }, apiServer.kind);
    expect(f.auth).toBe("none");
    const g = withKind(withToy, { ...blankForm(withToy, "toy"), secret: "sesame" }, "toy");
    expect(g.secret).toBe("sesame");
  });
  it("drops a secret typed for another sign-in", () => {
    const f = { ...blankForm(kinds), secret: "a-token" };
    expect(withAuth(f, "password").secret).toBe("");
    expect(withAuth(f, f.auth).secret).toBe("a-token");
    expect(withKind(kinds, f, apiServer.kind).secret).toBe("");
  });
  it("ignores a kind no driver has", () => {
    const f = blankForm(kinds);
    expect(withKind(kinds, f, "carrier-pigeon")).toBe(f);
  });
  it("offers a transport it has never heard of from its description", () => {
    const f = withKind(withToy, blankForm(withToy), "toy");
    expect(f).toMatchObject({ kind: "toy", url: "toy://local", auth: "spell" });
    expect(problem(withToy, { ...f, name: "box" })).toBe("Enter the toy spell.");
    expect(toRequest(withToy, { ...f, name: "box", secret: "sesame" })).toEqual({ name: "box", url: "toy://local", kind: "toy", auth: "spell", secret: "sesame" });
  });
});

describe("problem", () => {
  const api = { ...blankForm(kinds, apiServer.kind), name: "runs" };
  it("asks for the API key when adding", () => {
    expect(problem(kinds, api)).toMatch(/API key/);
    expect(problem(kinds, { ...api, secret: "k".repeat(20) })).toBe("");
  });
  it("asks for the session token of a dashboard", () => {
    expect(problem(kinds, { ...blankForm(kinds), name: "lab" })).toBe("Enter the session token.");
  });
  it("lets an edit keep the stored secret", () => {
    expect(problem(kinds, api, true, true)).toBe("");
    expect(problem(kinds, api, true, false)).toMatch(/API key/);
  });
  it("needs a name, a kind, an address and a sign-in of the kind", () => {
    expect(problem(kinds, { ...api, name: " " })).toMatch(/name/);
    expect(problem(kinds, { ...api, secret: "x", url: "" })).toMatch(/API server's address \(default .*8642\)/);
    expect(problem(kinds, { ...api, kind: "carrier-pigeon" })).toMatch(/kind/);
    expect(problem(kinds, { ...api, auth: "token" })).toMatch(/sign-in/);
  });
  it("needs no secret without sign-in", () => {
    expect(problem(kinds, { ...blankForm(kinds), name: "lab", auth: "none" })).toBe("");
  });
});

describe("toRequest", () => {
  it("sends only the secret the sign-in uses", () => {
    const f = { ...blankForm(kinds, apiServer.kind), name: " runs ", url: " http://h:8642 ", secret: "secret-key", username: "stale" };
    expect(toRequest(kinds, f)).toEqual({ name: "runs", url: "http://h:8642", kind: apiServer.kind, auth: "key", secret: "secret-key" });
    expect(toRequest(kinds, { ...f, auth: "none" })).toEqual({ name: "runs", url: "http://h:8642", kind: apiServer.kind, auth: "none" });
  });
  it("sends user and password for a gated gateway", () => {
    const f = { ...blankForm(kinds), name: "lab", auth: "password", username: " me ", secret: "pw" };
    expect(toRequest(kinds, f)).toEqual({ name: "lab", url: dashboard.default_url, kind: dashboard.kind, auth: "password", username: "me", secret: "pw" });
  });
  it("sends no secret when an edit keeps the stored one", () => {
    expect(toRequest(kinds, { ...blankForm(kinds), name: "lab" })).not.toHaveProperty("secret");
  });
});

describe("fromView", () => {
  it("starts an edit with a blank secret", () => {
    const f = fromView(kinds, { name: "runs", url: "http://h:8642", kind: apiServer.kind, auth: "key", has_secret: true });
    expect(f).toMatchObject({ name: "runs", kind: apiServer.kind, auth: "key", secret: "" });
  });
  it("reads a gateway saved without a kind as the default transport's", () => {
    expect(fromView(kinds, { name: "lab", url: "http://h:9119", auth: "token", has_secret: true }).kind).toBe(kinds[0].kind);
  });
});

describe("bridge", () => {
  // The kinds some driver rides beside, as Go says (none is named here).
  const withBridge = kinds.filter((k) => k.bridge);
  it("is offered only for kinds a driver rides beside, off by default", () => {
    expect(withBridge.length).toBeGreaterThan(0);
    for (const k of kinds) {
      const f = blankForm(kinds, k.kind);
      expect(f.bridge).toBe(false);
      expect(bridgeOffer(kinds, f)).toBe(k.bridge);
    }
    expect(bridgeOffer(withToy, blankForm(withToy, "toy"))).toBeUndefined();
  });
  it("is sent only when on, offered and usable with the sign-in", () => {
    for (const k of kinds) {
      for (const m of k.auth) {
        const f = { ...blankForm(kinds, k.kind), name: "lab", auth: m.name, secret: "s", bridge: true };
        const usable = !!k.bridge?.auth.includes(m.name);
        expect(bridgeUsable(kinds, f), `${k.kind}/${m.name}`).toBe(usable);
        expect(toRequest(kinds, f).bridge, `${k.kind}/${m.name}`).toBe(usable ? true : undefined);
        expect(toRequest(kinds, { ...f, bridge: false })).not.toHaveProperty("bridge");
        expect(bridgeNeeds(kinds, f) === "", `${k.kind}/${m.name}`).toBe(usable || !k.bridge);
      }
    }
  });
  it("says which sign-in it needs", () => {
    const k = withBridge[0];
    const other = k.auth.find((m) => !k.bridge!.auth.includes(m.name))!;
    const need = k.auth.find((m) => k.bridge!.auth.includes(m.name))!;
    expect(bridgeNeeds(kinds, { ...blankForm(kinds, k.kind), auth: other.name })).toBe(
      `The ${k.bridge!.name} signs in with the gateway's ${lowerFirst(need.label)}: choose that sign-in to turn it on.`,
    );
  });
  it("an edit starts with the gateway's switch", () => {
    const k = withBridge[0];
    expect(fromView(kinds, { name: "lab", url: "http://h:9119", kind: k.kind, auth: k.bridge!.auth[0], has_secret: true, bridge: true }).bridge).toBe(true);
    expect(fromView(kinds, { name: "lab", url: "http://h:9119", kind: k.kind, auth: k.bridge!.auth[0], has_secret: true }).bridge).toBe(false);
  });
});

describe("words", () => {
  it("lowers a name mid-sentence but not an acronym", () => {
    expect(lowerFirst("Session token")).toBe("session token");
    expect(lowerFirst("API key")).toBe("API key");
  });
  it("shows a hint's backquoted parts as code, as text", () => {
    expect(hintParts("start it as `X=1 hermes` and <b>copy</b> `y`")).toEqual([
      { text: "start it as ", code: false },
      { text: "X=1 hermes", code: true },
      { text: " and <b>copy</b> ", code: false },
      { text: "y", code: true },
    ]);
  });
  it("every sign-in with a secret says where it comes from", () => {
    for (const k of kinds) for (const m of k.auth) if (m.secret) expect(m.hint, `${k.kind}/${m.name}`).toBeTruthy();
  });
});

import { describe, expect, it } from "vitest";
import { authOptions, blankForm, defaultURL, fromView, problem, toRequest, withKind } from "./gatewayForm";

describe("gateway kinds", () => {
  it("offers an API key for API servers and tokens or passwords for gateways", () => {
    expect(authOptions("api").map((o) => o.value)).toEqual(["key", "none"]);
    expect(authOptions("ws").map((o) => o.value)).toEqual(["token", "password", "none"]);
  });
  it("switching to an API server picks the key and its default port", () => {
    const f = withKind(blankForm("ws"), "api");
    expect(f.auth).toBe("key");
    expect(f.url).toBe(defaultURL.api);
  });
  it("keeps an address the user typed when the kind changes", () => {
    const f = withKind({ ...blankForm("ws"), url: "https://hermes.lan:9119" }, "api");
    expect(f.url).toBe("https://hermes.lan:9119");
  });
  it("keeps a sign-in both kinds offer", () => {
    expect(withKind({ ...blankForm("ws"), auth: "none" }, "api").auth).toBe("none");
  });
});

describe("problem", () => {
  const api = { ...blankForm("api"), name: "runs" };
  it("asks for the API key when adding", () => {
    expect(problem(api)).toMatch(/API key/);
    expect(problem({ ...api, key: "k".repeat(20) })).toBe("");
  });
  it("lets an edit keep the stored secret", () => {
    expect(problem(api, true, true)).toBe("");
    expect(problem(api, true, false)).toMatch(/API key/);
  });
  it("needs a name and an address", () => {
    expect(problem({ ...api, name: " " })).toMatch(/name/);
    expect(problem({ ...api, key: "x", url: "" })).toMatch(/8642/);
  });
  it("needs no secret without sign-in", () => {
    expect(problem({ ...blankForm("ws"), name: "lab", auth: "none" })).toBe("");
  });
});

describe("toRequest", () => {
  it("sends only the secret the sign-in uses", () => {
    const f = { ...blankForm("api"), name: " runs ", url: " http://h:8642 ", key: "secret-key", token: "stale-token", password: "stale" };
    expect(toRequest(f)).toEqual({ name: "runs", url: "http://h:8642", kind: "api", auth: "key", key: "secret-key" });
  });
  it("sends user and password for a gated gateway", () => {
    const f = { ...blankForm("ws"), name: "lab", auth: "password" as const, username: " me ", password: "pw", key: "stale" };
    expect(toRequest(f)).toEqual({ name: "lab", url: defaultURL.ws, kind: "ws", auth: "password", username: "me", password: "pw" });
  });
});

describe("fromView", () => {
  it("starts an edit with blank secrets", () => {
    const f = fromView({ name: "runs", url: "http://h:8642", kind: "api", auth: "key", has_secret: true });
    expect(f).toMatchObject({ name: "runs", kind: "api", auth: "key", key: "", token: "", password: "" });
  });
});

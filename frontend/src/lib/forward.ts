// On Linux the window runs as its own process: Herald binds only
// window.go.app.Window.Call there, which forwards a call by name to the
// always-on Herald process. This installs window.go.app.WindowAPI as a proxy over
// it, so every caller (bridge.ts, generated bindings) keeps calling
// window.go.app.WindowAPI.<Method>(...) whichever process model runs.
type Bound = Record<string, (...args: unknown[]) => Promise<unknown>>;
type Forwarder = { Call: (method: string, args: unknown[]) => Promise<unknown> };
type GoApp = { WindowAPI?: Bound; Window?: Forwarder };

/** A proxy whose every property is a method forwarded through fw. */
export function forwarding(fw: Forwarder): Bound {
  return new Proxy({} as Bound, {
    get: (_t, name) => {
      if (typeof name !== "string") return undefined;
      // Arguments travel as JSON: undefined (an omitted optional) as null.
      return (...args: unknown[]) => fw.Call(name, args.map((a) => (a === undefined ? null : a)));
    },
  });
}

/** Installs the proxy when only the forwarder is bound; reports whether
 * window.go.app.WindowAPI is usable afterwards. */
export function installForwarder(): boolean {
  const w = window as unknown as { go?: { app?: GoApp } };
  const g = w.go?.app;
  if (!g) return false;
  if (!g.WindowAPI && g.Window && typeof g.Window.Call === "function") g.WindowAPI = forwarding(g.Window);
  return !!g.WindowAPI;
}

// Window-wide keys: Esc closes the open sheet, Ctrl+W hides the window to
// the tray, Ctrl+Q quits (Cmd on macOS). The approval keys (o, s, a, d)
// live in keyguard.ts.
import type { KeyLike } from "./keyguard";

export type Shortcut = "close" | "hide" | "quit";

/** The window shortcut a key press means, if any. */
export function shortcutFor(e: KeyLike): Shortcut | undefined {
  if (e.isComposing || e.repeat) return undefined;
  if (e.key === "Escape") return e.ctrlKey || e.altKey || e.metaKey || e.shiftKey ? undefined : "close";
  if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return undefined;
  switch (e.key.toLowerCase()) {
    case "w":
      return "hide";
    case "q":
      return "quit";
  }
  return undefined;
}

/** The tab a key moves to in a tab list (the ARIA tabs pattern: arrows
 *  wrap around, Home and End jump), or undefined for other keys. */
export function nextTab<T>(tabs: readonly T[], current: T, key: string): T | undefined {
  const i = tabs.indexOf(current);
  switch (key) {
    case "ArrowRight":
      return tabs[(i + 1) % tabs.length];
    case "ArrowLeft":
      return tabs[(i - 1 + tabs.length) % tabs.length];
    case "Home":
      return tabs[0];
    case "End":
      return tabs[tabs.length - 1];
  }
  return undefined;
}

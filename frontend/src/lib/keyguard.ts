// Keyboard shortcuts on the approval sheet answer only the request the
// user is looking at, and only on purpose: a key held down (repeat), a key
// with a modifier (Ctrl/Alt/Meta/Shift: a shortcut meant for something
// else) and any key in the first SETTLE_MS after a new request appeared or
// the window's focus changed do nothing — as browsers do for permission
// prompts, so typing meant for another window never answers a request.
import { choiceForKey, type Choice } from "./choices";

/** How long shortcuts stay inert after a new request or a focus change. */
export const SETTLE_MS = 700;

/** The parts of a KeyboardEvent the guard reads. */
export interface KeyLike {
  key: string;
  repeat?: boolean;
  ctrlKey?: boolean;
  altKey?: boolean;
  metaKey?: boolean;
  shiftKey?: boolean;
  isComposing?: boolean;
  /** where the key goes: a key typed into a field is no shortcut */
  target?: EventTarget | TargetLike | null;
}

export class KeyGuard {
  private inertUntil = 0;
  private lastSeen = "";

  constructor(private readonly now: () => number = () => Date.now(), private readonly settle = SETTLE_MS) {}

  /** Something changed on screen or in focus: shortcuts wait SETTLE_MS. */
  arm(): void {
    this.inertUntil = this.now() + this.settle;
  }

  /** Arms the guard when what is on screen changed (e.g. the keys of the
   *  waiting requests and the one shown). */
  seen(what: string): void {
    if (what !== this.lastSeen) {
      this.lastSeen = what;
      this.arm();
    }
  }

  /** Whether shortcuts are inert now. */
  inert(): boolean {
    return this.now() < this.inertUntil;
  }

  /** The choice a key press selects, if it is one the guard lets through. */
  choice(e: KeyLike, offered: string[]): Choice | undefined {
    if (e.repeat || e.ctrlKey || e.altKey || e.metaKey || e.shiftKey || e.isComposing || typingInto(e.target) || this.inert()) return undefined;
    return choiceForKey(e.key, offered);
  }
}

/** The parts of an event target typingInto reads. */
export interface TargetLike {
  tagName?: string;
  isContentEditable?: boolean;
}

/**
 * Whether a key press goes into a field (input, textarea, select, editable
 * text): then it is typing, never a shortcut. Typing "go on" into the quick
 * prompt must not answer the approval on screen with "o".
 */
export function typingInto(target: EventTarget | TargetLike | null | undefined): boolean {
  const t = target as TargetLike | null | undefined;
  if (!t) return false;
  const tag = (t.tagName ?? "").toUpperCase();
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || !!t.isContentEditable;
}

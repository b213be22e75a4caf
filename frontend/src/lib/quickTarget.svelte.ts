// The quick prompt's target as the user chose it, kept outside the
// component: switching to History and back (which remounts the quick
// prompt) must not move it.
import type { AskTarget } from "./runs";

export const quickTarget = $state<{ chosen: AskTarget | undefined }>({ chosen: undefined });

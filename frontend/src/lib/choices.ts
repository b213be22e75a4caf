// The one table of approval choices (labels, keys, descriptions) is Go's
// (source.ChoiceTable): it arrives in every snapshot and the window words
// a choice only from it. Nothing here writes a label
// (acceptance.TestChoiceLabelsOnlyInTable fails if it did).
import type { ChoiceInfo } from "./types";

let table: ChoiceInfo[] = [];

/** Takes the table a snapshot carries (App does, on every snapshot). */
export function setChoices(t: ChoiceInfo[] | undefined): void {
  if (t && t.length) table = t;
}

/** A choice the window can offer: one of the table's. */
export type Choice = string;

/** The table's entry for choice c. */
export function choiceInfo(c: string | undefined): ChoiceInfo | undefined {
  return table.find((x) => x.choice === c);
}

/** Choice c's label; a choice the table lacks is said as it is. */
export function choiceLabel(c: string | undefined): string {
  return choiceInfo(c)?.label ?? c ?? "";
}

/** The choice a key press selects, if the request offers it. */
export function choiceForKey(key: string, offered: string[]): Choice | undefined {
  const c = table.find((x) => x.key === key.toLowerCase())?.choice;
  return c && offered.includes(c) ? c : undefined;
}

/** Offered choices in the table's order (deny last); a choice the table
 *  lacks is not offered. */
export function orderedChoices(offered: string[]): Choice[] {
  return table.map((x) => x.choice).filter((c) => offered.includes(c));
}

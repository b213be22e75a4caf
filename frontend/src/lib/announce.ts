// What the screen-reader live region says when requests arrive: new
// requests since the last snapshot, in one short sentence.

export interface Announceable {
  key: string;
  kind?: string;
  display: { gateway: string; first_line: string };
}

const MAX = 160;

function short(s: string): string {
  return s.length > MAX ? s.slice(0, MAX) + "…" : s;
}

/** The sentence for the requests in `now` that `seen` lacks ("" for none).
 *  It updates `seen` to the keys of `now`. */
export function announcement(seen: Set<string>, now: Announceable[]): string {
  const fresh = now.filter((a) => !seen.has(a.key));
  seen.clear();
  for (const a of now) seen.add(a.key);
  if (fresh.length === 0) return "";
  if (fresh.length > 1) {
    const waiting = now.length > fresh.length ? `, ${now.length} waiting in all` : "";
    return `${fresh.length} new requests need you${waiting}.`;
  }
  const a = fresh[0];
  const what = !a.kind || a.kind === "approval" ? "Approval needed" : "Hermes asks";
  return short(`${what} on ${a.display.gateway}: ${a.display.first_line}`);
}

import type { Snapshot } from "./types";

/** What the window says about a missing tray: the note on how to get one
 *  (until dismissed), the header's "Quit when the window closes" once it
 *  was dismissed, or nothing while there is a tray. */
export function trayNote(snap: Pick<Snapshot, "tray_missing" | "tray_notice_dismissed"> | undefined): "note" | "toggle" | "none" {
  if (!snap?.tray_missing) return "none";
  return snap.tray_notice_dismissed ? "toggle" : "note";
}

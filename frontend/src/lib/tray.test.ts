import { describe, expect, it } from "vitest";
import { trayNote } from "./tray";

describe("trayNote", () => {
  it("shows the note without a tray until dismissed, then the header toggle", () => {
    const cases: [Parameters<typeof trayNote>[0], ReturnType<typeof trayNote>][] = [
      [undefined, "none"],
      [{ tray_missing: false }, "none"],
      [{ tray_missing: false, tray_notice_dismissed: true }, "none"],
      [{ tray_missing: true }, "note"],
      [{ tray_missing: true, tray_notice_dismissed: false }, "note"],
      [{ tray_missing: true, tray_notice_dismissed: true }, "toggle"],
    ];
    for (const [snap, want] of cases) expect(trayNote(snap), JSON.stringify(snap)).toBe(want);
  });
});

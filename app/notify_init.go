package app

import (
	"fmt"

	"github.com/herald-desktop/herald/backend/source"
)

// BundleID is Herald's macOS bundle identifier (build/darwin/Info.plist);
// macOS delivers notifications only to an app bundle that has one.
const BundleID = "io.github.herald-desktop.herald"

// notificationsOff explains a failed notification setup: what is off,
// what still works, and what to do on this OS. what is "" (notifications)
// or "buttons" (the allow-once / deny actions).
func notificationsOff(goos, what string, err error) error {
	head := "Desktop notifications are off"
	if what == "buttons" {
		head = fmt.Sprintf("Notification buttons (%s, %s) are off", source.ChoiceLabel(source.ChoiceOnce), source.ChoiceLabel(source.ChoiceDeny))
	}
	var hint string
	switch goos {
	case "darwin":
		hint = "Start Herald from Herald.app (built with `wails build`), whose Info.plist carries the bundle id " + BundleID + "."
	case "windows":
		hint = "Check that notifications are allowed for Herald in Settings > System > Notifications."
	default:
		hint = "Check that your desktop runs a notification service (org.freedesktop.Notifications on the session D-Bus)."
	}
	return fmt.Errorf("%s (%v). Approvals still show in the tray and in this window. %s", head, err, hint)
}

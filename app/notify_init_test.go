package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNotificationsOffSaysWhatToDo(t *testing.T) {
	t.Parallel()
	cause := errors.New("notifications require a valid bundle identifier")
	tests := []struct {
		goos, what string
		want       []string
	}{
		{"darwin", "", []string{"Desktop notifications are off", "bundle identifier", BundleID, "tray"}},
		{"linux", "", []string{"org.freedesktop.Notifications", "tray"}},
		{"windows", "buttons", []string{"Allow once, Deny", "Settings"}},
	}
	for _, tc := range tests {
		got := notificationsOff(tc.goos, tc.what, cause).Error()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s/%s: %q lacks %q", tc.goos, tc.what, got, w)
			}
		}
	}
}

func TestTrayIconsFollowTheState(t *testing.T) {
	t.Parallel()
	seen := map[string]TrayState{}
	for _, s := range []TrayState{TrayDisconnected, TrayConnected, TrayPending, TrayDegraded, TrayRunning, TrayBlind} {
		b := trayIcon(s)
		if len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Fatalf("state %d: not a PNG", s)
		}
		if prev, ok := seen[string(b)]; ok {
			t.Fatalf("states %d and %d draw the same icon", prev, s)
		}
		seen[string(b)] = s
	}
}

// The bundle id the error names is the one the app bundle carries.
func TestBundleIDMatchesInfoPlist(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "build", "darwin", "Info.plist"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<key>CFBundleIdentifier</key>\n        <string>"+BundleID+"</string>") {
		t.Fatalf("build/darwin/Info.plist does not carry the bundle id %s", BundleID)
	}
}

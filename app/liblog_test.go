package app

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"testing"
)

// TestLibraryLog: systray's raw "failed to register" line becomes a quiet
// note (the window explains a missing tray), other library lines stay
// warnings, and control characters in them are shown, not obeyed.
func TestLibraryLog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line, want, never string
	}{
		{"systray error: failed to register: The name org.kde.StatusNotifierWatcher was not provided by any .service files", "", "systray error"},
		{"systray error: failed to emit new icon signal: boom", "level=WARN", ""},
		{"odd \x1b]52;c;aGk=\x07 line", "level=WARN", "\x1b"},
	} {
		var out bytes.Buffer
		l := log.New(LibraryLog(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))), "", log.LstdFlags)
		l.Println(tc.line)
		got := out.String()
		if tc.want == "" && got != "" {
			t.Errorf("%q logged at warning level: %q", tc.line, got)
		}
		if tc.want != "" && (!strings.Contains(got, tc.want) || strings.Count(got, "\n") != 1) {
			t.Errorf("%q logged %q, want one line with %q", tc.line, got, tc.want)
		}
		if tc.never != "" && strings.Contains(got, tc.never) {
			t.Errorf("%q logged %q, which holds %q", tc.line, got, tc.never)
		}
	}
}

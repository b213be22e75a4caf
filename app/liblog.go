package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/herald-desktop/herald/approval"
)

// LibraryLog is where the standard library's log package should write
// (log.SetOutput) in a Herald process: libraries Herald uses (the tray's
// fyne.io/systray) report through it, and their lines would otherwise
// reach the terminal raw. Each line goes to l instead, as gateway-free
// but still foreign text (one visible line). A missing tray host
// (StatusNotifierWatcher), which the window already explains, is logged
// below the default level, so it no longer reads as an error.
func LibraryLog(l *slog.Logger) io.Writer { return &libraryLog{log: l} }

type libraryLog struct{ log *slog.Logger }

// knownQuiet are library lines Herald handles itself, with what it does.
var knownQuiet = []struct{ prefix, msg string }{ // prefix: as the library words it
	{"systray error: failed to register", "no tray host (StatusNotifierWatcher) yet: the window says how to get a tray, and the tray appears when one starts"},
}

func (w *libraryLog) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		text := strings.TrimSpace(string(line))
		if text == "" {
			continue
		}
		level, msg := slog.LevelWarn, "a library reported a problem"
		for _, q := range knownQuiet {
			if strings.Contains(text, q.prefix) { // after log's date, if any
				level, msg = slog.LevelInfo, q.msg
			}
		}
		w.log.Log(context.Background(), level, msg, "detail", approval.VisibleLine(text))
	}
	return len(p), nil
}

package integration

import (
	"io"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermespeer"
)

// TestWatchAttachedOnRealGateway: beside a running Herald (a `herald
// watch` here; the desktop app serves the same control socket), `herald
// watch` with no gateway of its own attaches to it: it shows the real
// gateway connected and an approval its agent asks, denies it from the
// keyboard, and the real approval machinery blocks the command.
func TestWatchAttachedOnRealGateway(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realWS(t, v)
			h := newHerald(t)
			w := h.connectWS(p)
			a := h.attach()
			a.Connected(0)
			mark, wmark := a.Mark(), w.Mark()
			sid := h.ask("approve-me: rm -rf ./attached-cache")
			r := a.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "session") == sid })
			id := str(r, "id")
			io.WriteString(a.stdin, "d "+id+"\n")
			a.Wait(mark, "the deny confirmed", func(m map[string]any) bool {
				text, _ := m["text"].(string)
				return m["type"] == "message" && strings.Contains(text, id+" deny, confirmed by the gateway")
			})
			if text, _ := w.endOf(wmark, sid); !strings.HasPrefix(text, "blocked: rm -rf ./attached-cache") {
				t.Fatalf("the turn ended %q, want the command blocked", text)
			}
			out := h.mustRun("log", "--all")
			if !strings.Contains(out, "choice=deny") || !strings.Contains(out, "via terminal") {
				t.Fatalf("the running Herald's history: %s", out)
			}
		})
	}
}

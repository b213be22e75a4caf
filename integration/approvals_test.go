package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermespeer"
)

// ask starts a prompt through the running Herald and returns the session.
func (h *herald) ask(args ...string) string {
	h.t.Helper()
	out := h.mustRun(append([]string{"ask", "--json"}, args...)...)
	var rec struct {
		Ask struct {
			Session string `json:"session"`
		} `json:"ask"`
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.Ask.Session == "" {
		h.t.Fatalf("ask printed %q (%v)", out, err)
	}
	return rec.Ask.Session
}

// connectWS starts watch on the real gateway p and waits until connected.
func (h *herald) connectWS(p *hermespeer.Peer, extra ...string) *watch {
	h.t.Helper()
	w := h.watch(nil, append([]string{"--gateway", "lab=" + p.Base, "--token", p.Secret}, extra...)...)
	w.Connected(0)
	return w
}

// TestApprovalEachChoice: a dangerous command on the real gateway reaches
// herald watch; herald approve answers it with each choice and the real
// approval machinery acts on it: once and session run it (session also
// approves the pattern for the rest of the session, with no second ask),
// always too (with --yes-always), deny blocks it.
func TestApprovalEachChoice(t *testing.T) {
	cases := []struct {
		choice, command string
		ran             bool
	}{
		{"once", "git reset --hard HEAD", true},
		{"session", "chmod 777 ./shared-dir", true},
		{"always", "psql -c 'DROP TABLE users'", true},
		{"deny", "rm -rf ./build", false},
	}
	for _, v := range hermespeer.Versions {
		for _, c := range cases {
			t.Run(v+"/"+c.choice, func(t *testing.T) {
				t.Parallel()
				p := realWS(t, v)
				if c.choice == "always" {
					// always changes the gateway's allowlist: its own server.
					p = hermespeer.Start(t, hermespeer.WS, v)
				}
				h := newHerald(t)
				w := h.connectWS(p)
				mark := w.Mark()
				sid := h.ask("approve-me: " + c.command)
				a := w.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "kind") == "approval" })
				if got := str(a, "request", "command"); got != c.command {
					t.Fatalf("approval shows command %q, want %q", got, c.command)
				}
				id := str(a, "id")
				args := []string{"approve", id, c.choice}
				if c.choice == "always" {
					args = []string{"approve", "--yes-always", id, c.choice}
				}
				out := h.mustRun(args...)
				if !strings.Contains(out, "confirmed by the gateway") {
					t.Fatalf("approve printed %q", out)
				}
				end := w.Event(mark, "message.complete", func(m map[string]any) bool { return str(m, "event", "session") == sid })
				text := str(end, "event", "payload", "text")
				want := "blocked: "
				if c.ran {
					want = "approved: "
				}
				if !strings.HasPrefix(text, want+c.command) {
					t.Fatalf("the turn ended %q, want %q", text, want+c.command)
				}
				if c.choice == "session" {
					// The pattern is approved for the rest of the session.
					mark = w.Mark()
					h.mustRun("ask", "--session", sid, "approve-me: "+c.command)
					end := w.Event(mark, "message.complete", func(m map[string]any) bool { return str(m, "event", "session") == sid })
					if text := str(end, "event", "payload", "text"); !strings.HasPrefix(text, "approved: ") {
						t.Fatalf("second run in the session ended %q", text)
					}
				}
				r := w.Approval(0, "updated", func(m map[string]any) bool { return str(m, "id") == id && str(m, "request", "state") == "resolved" })
				if got := str(r, "request", "outcome", "choice"); got != c.choice {
					t.Fatalf("resolved with %q, want %q", got, c.choice)
				}
				for _, m := range w.records() {
					if str(m, "event", "kind") == "herald.session.elsewhere" {
						t.Errorf("watch said a session Herald drives alone is followed elsewhere: %s", fmtRec(m))
					}
				}
			})
		}
	}
}

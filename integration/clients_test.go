package integration

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermespeer"
)

// notice waits for a session notice of kind about the stored session key.
func (w *watch) notice(from int, kind, key string) map[string]any {
	w.t.Helper()
	return w.Wait(from, "session notice "+kind+" "+key, func(m map[string]any) bool {
		return m["type"] == "session" && str(m, "notice", "kind") == kind && str(m, "notice", "key") == key
	})
}

// sessions types "sessions" into watch and returns the list it prints.
// It types it twice: watch handles its input lines in order, so the
// second list's header closes the first.
func (w *watch) sessions() string {
	w.t.Helper()
	mark := w.Mark()
	if _, err := io.WriteString(w.stdin, "sessions\nsessions\n"); err != nil {
		w.t.Fatal(err)
	}
	header := func(m map[string]any) bool {
		return m["type"] == "message" && strings.HasSuffix(str(m, "text"), "(ask):")
	}
	headers := 0
	w.Wait(mark, "the session list", func(m map[string]any) bool {
		if header(m) {
			headers++
		}
		return headers == 2
	})
	var b strings.Builder
	headers = 0
	for _, m := range w.records()[mark:] {
		if header(m) {
			headers++
		}
		if headers == 2 {
			break
		}
		if m["type"] == "message" {
			b.WriteString(str(m, "text") + "\n")
		}
	}
	return b.String()
}

// TestSessionsFromAnotherClient: sessions another client (the Hermes TUI
// or Desktop, here a plain JSON-RPC client) drives on the real gateway.
//   - still attached: Herald (follow ask) finds and offers the running
//     session but does not take it: the other client keeps its events;
//   - gone: once the other client left and the gateway reaped the
//     session, Herald's session list no longer has it;
//   - started later, with --follow auto: Herald follows it, shows its
//     approval with the command and its deny blocks the command.
func TestSessionsFromAnotherClient(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			t.Run("attached-and-gone", func(t *testing.T) {
				t.Parallel()
				// A short reap grace so "gone" happens within the test.
				p := hermespeer.Start(t, hermespeer.WS, v, hermespeer.Env("HERMES_TUI_WS_ORPHAN_REAP_GRACE_S=1"))
				a := dialRaw(t, "other client", p.URL)
				a.WaitEvent(0, "gateway.ready", nil)
				s := a.Create()
				mark := a.Len()
				a.Submit(s.SessionID, "slow 12")
				a.WaitEvent(mark, "message.delta", nil)

				h := newHerald(t)
				w := h.connectWS(p)
				w.notice(0, "offer", s.StoredSessionID)
				a.WaitIdle(mark, s.SessionID) // the other client still gets the whole turn
				for _, m := range w.records() {
					if str(m, "event", "session") == s.SessionID && str(m, "event", "kind") == "message.complete" {
						t.Fatalf("Herald took the other client's turn: %s", fmtRec(m))
					}
				}
				if l := w.sessions(); !strings.Contains(l, s.StoredSessionID) {
					t.Fatalf("session list lacks the attached session:\n%s", l)
				}
				a.Close()
				// The gateway reaps the detached idle session after the
				// grace; then Herald's list drops it at its next listing.
				b := dialRaw(t, "observer", p.URL)
				poll(t, "the gateway to reap the session", func() bool {
					return !strings.Contains(string(b.MustCall("session.active_list", map[string]any{}, nil).Result), s.SessionID)
				})
				poll(t, "Herald's list to drop the session", func() bool { return !strings.Contains(w.sessions(), s.StoredSessionID) })
			})
			t.Run("started-later", func(t *testing.T) {
				t.Parallel()
				p := realWS(t, v)
				h := newHerald(t)
				w := h.connectWS(p, "--follow", "auto")
				a := dialRaw(t, "other client", p.URL)
				s := a.Create()
				// approve-after: the approval comes 10 ticks (5 s) in, after
				// Herald has followed the session.
				a.Submit(s.SessionID, "approve-after 10: rm -rf ./found-later")
				w.notice(0, "followed", s.StoredSessionID)
				r := w.Approval(0, "arrived", func(m map[string]any) bool { return str(m, "request", "session") == s.SessionID })
				if cmd := str(r, "request", "command"); cmd != "rm -rf ./found-later" {
					t.Fatalf("approval shows %q", cmd)
				}
				h.mustRun("approve", str(r, "id"), "deny")
				if text, _ := w.endOf(0, s.SessionID); !strings.HasPrefix(text, "blocked: rm -rf ./found-later") {
					t.Fatalf("turn ended %q", text)
				}
			})
		})
	}
}

// poll re-checks cond every 250 ms until it holds, bounded by guard: a
// real server's own timers (reaping, listings) cannot run on a fake clock.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, guard)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestTwoHeraldsAtOnce: two Herald instances on one real gateway. The one
// that asks gets the session's events and approval; the other finds the
// session driven by another client and does not take it. A second watch
// on the same control socket refuses to start instead of stealing
// sessions.
func TestTwoHeraldsAtOnce(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realWS(t, v)
			h1, h2 := newHerald(t), newHerald(t)
			w1 := h1.connectWS(p)
			w2 := h2.connectWS(p)
			mark := w1.Mark()
			sid := h1.ask("approve-after 6: git reset --hard HEAD")
			r := w1.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "session") == sid })
			stored := str(r, "request", "stored_session")
			w2.notice(0, "found", stored)
			h1.mustRun("approve", str(r, "id"), "once")
			if text, _ := w1.endOf(mark, sid); !strings.HasPrefix(text, "approved: ") {
				t.Fatalf("turn ended %q", text)
			}
			for _, m := range w2.records() {
				if m["type"] == "approval" {
					t.Fatalf("the second Herald got an approval of a session it does not follow: %s", fmtRec(m))
				}
			}
			// The same control socket: refused, one line.
			w3 := h1.watch(nil, "--gateway", "lab="+p.Base, "--token", p.Secret)
			code := w3.Exited()
			if e := strings.TrimSpace(w3.Stderr()); code == 0 || e == "" || strings.Contains(e, "\n") {
				t.Fatalf("a second watch on the same control socket: exit %d, stderr %q", code, e)
			}
		})
	}
}

// TestURLForms: the gateway and API server addresses a user types all
// reach the real servers (or say in one line why not).
func TestURLForms(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ws, api := realWS(t, v), realAPI(t, v)
			hostPort := strings.TrimPrefix(ws.Base, "http://")
			localhost := "localhost:" + hostPort[strings.LastIndex(hostPort, ":")+1:]
			apiHostPort := strings.TrimPrefix(api.Base, "http://")
			forms := []struct {
				name string
				args []string
			}{
				{"http base", []string{"--gateway", ws.Base, "--token", ws.Secret}},
				{"http base with slash", []string{"--gateway", ws.Base + "/", "--token", ws.Secret}},
				{"host:port", []string{"--gateway", hostPort, "--token", ws.Secret}},
				{"localhost:port", []string{"--gateway", localhost, "--token", ws.Secret}},
				{"ws url", []string{"--gateway", "ws://" + hostPort + "/api/ws", "--token", ws.Secret}},
				{"named", []string{"--gateway", "lab=ws://" + hostPort + "/api/ws/", "--token", ws.Secret}},
				{"api http base", []string{"--api", api.Base, "--api-key", api.Secret}},
				{"api host:port", []string{"--api", apiHostPort, "--api-key", api.Secret}},
				{"api /v1", []string{"--api", api.Base + "/v1", "--api-key", api.Secret}},
			}
			for _, f := range forms {
				t.Run(f.name, func(t *testing.T) {
					t.Parallel()
					h := newHerald(t)
					w := h.watch(nil, f.args...)
					w.Connected(0)
				})
			}
			// The dashboard's own WebSocket address with its token (as
			// the page's developer tools show it) is refused in one line
			// that says what to do and never echoes the token.
			refused := []struct {
				name string
				args []string
			}{
				{"ws url with ?token=", []string{"--gateway", "ws://" + hostPort + "/api/ws?token=" + ws.Secret}},
				{"api url with ?key=", []string{"--api", api.Base + "/?key=" + api.Secret}},
			}
			for _, f := range refused {
				t.Run(f.name, func(t *testing.T) {
					t.Parallel()
					h := newHerald(t)
					out, errOut, code := h.run(append([]string{"watch"}, f.args...)...)
					line := strings.TrimSpace(errOut)
					if code == 0 || strings.Contains(line, "\n") || !strings.Contains(line, "separately") ||
						strings.Contains(out+errOut, ws.Secret) || strings.Contains(out+errOut, api.Secret) {
						t.Fatalf("watch %v: exit %d, stdout %q, stderr %q; want one line saying to give the secret separately, without it", f.args, code, out, errOut)
					}
				})
			}
		})
	}
}

// TestAPIServerApprovals: a run on the real API server asks for approval;
// herald approve answers it with each choice and the run ends as the real
// server decides (approved or blocked).
func TestAPIServerApprovals(t *testing.T) {
	cases := []struct {
		choice string
		ran    bool
	}{{"once", true}, {"session", true}, {"deny", false}}
	for _, v := range hermespeer.Versions {
		for _, c := range cases {
			t.Run(v+"/"+c.choice, func(t *testing.T) {
				t.Parallel()
				p := realAPI(t, v)
				h := newHerald(t)
				w := h.watch(nil, "--api", "api="+p.Base, "--api-key", p.Secret, "--start", "approve-me: rm -rf ./api-"+c.choice)
				r := w.Approval(0, "arrived", nil)
				if cmd := str(r, "request", "command"); cmd != "rm -rf ./api-"+c.choice {
					t.Fatalf("approval shows %q", cmd)
				}
				if out := h.mustRun("approve", str(r, "id"), c.choice); !strings.Contains(out, "confirmed") {
					t.Fatalf("approve printed %q", out)
				}
				end := w.Wait(0, "the run's end", func(m map[string]any) bool {
					k := str(m, "event", "kind")
					return m["type"] == "event" && (k == "run.completed" || k == "run.failed")
				})
				out := fmtRec(end)
				want := "blocked: "
				if c.ran {
					want = "approved: "
				}
				if !strings.Contains(out, want+"rm -rf ./api-"+c.choice) {
					t.Fatalf("the run ended %s, want %q", out, want)
				}
			})
		}
	}
}

package integration

import (
	"strings"
	"syscall"
	"testing"

	"github.com/herald-desktop/herald/backend/hermespeer"
)

// endOf waits for the message.complete of session sid (after mark) and
// returns its text.
func (w *watch) endOf(mark int, sid string) (text, status string) {
	w.t.Helper()
	m := w.Event(mark, "message.complete", func(m map[string]any) bool { return str(m, "event", "session") == sid })
	return str(m, "event", "payload", "text"), str(m, "event", "payload", "status")
}

// TestUnseenApprovalIsDenyOnly: another client's turn waits on an
// approval; Herald follows the session afterwards. The real gateways do
// not send the approval again, so after the quiet period Herald raises one
// without a command that offers and accepts only deny, and the deny
// reaches the real approval queue (the command is blocked).
func TestUnseenApprovalIsDenyOnly(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realWS(t, v)
			a := dialRaw(t, "other client", p.URL)
			s := a.Create()
			mark := a.Len()
			a.Submit(s.SessionID, "approve-me: rm -rf ./cache-unseen")
			a.WaitEvent(mark, "approval.request", nil)

			h := newHerald(t)
			w := h.connectWS(p, "--session", s.StoredSessionID)
			r := w.Approval(0, "arrived", func(m map[string]any) bool { return str(m, "request", "session") == s.SessionID })
			if cmd := str(r, "request", "command"); cmd != "" {
				t.Fatalf("Herald shows a command it was never sent: %q", cmd)
			}
			if ch, _ := field(r, "request", "choices").([]any); len(ch) != 1 || ch[0] != "deny" {
				t.Fatalf("unseen approval offers %v, want only deny", ch)
			}
			id := str(r, "id")
			if out, e, code := h.run("approve", id, "once"); code == 0 || !strings.Contains(e+out, "not") {
				t.Fatalf("approve once of an unseen approval: exit %d %q %q", code, out, e)
			}
			if out := h.mustRun("approve", id, "deny"); !strings.Contains(out, "deny") {
				t.Fatalf("deny printed %q", out)
			}
			text, _ := w.endOf(0, s.SessionID)
			if !strings.HasPrefix(text, "blocked: rm -rf ./cache-unseen") {
				t.Fatalf("the turn ended %q, want blocked", text)
			}
		})
	}
}

// TestPromptsClarifyAndSudo: clarify and sudo from the real gateway are
// answered with herald answer; the sudo password reaches the agent (it
// reports its length and hash) and lands nowhere else: not in watch's
// output, not in any file of Herald's (history, config). Secret prompts
// are not in the real stub; the fake covers them (cli).
func TestPromptsClarifyAndSudo(t *testing.T) {
	const password = "pw-Real-Hermes-7f3a9c"
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realWS(t, v)
			h := newHerald(t)
			w := h.connectWS(p)

			mark := w.Mark()
			sid := h.ask("clarify: Deploy where?")
			r := w.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "kind") == "clarify" })
			if out := h.mustRun("answer", "--text", str(r, "id"), "staging"); !strings.Contains(out, "staging") {
				t.Fatalf("answer printed %q", out)
			}
			if text, _ := w.endOf(mark, sid); text != "clarify answer: 'staging'" {
				t.Fatalf("clarify turn ended %q", text)
			}

			mark = w.Mark()
			h.mustRun("ask", "--session", sid, "sudo: apt-get update")
			r = w.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "kind") == "sudo" })
			id := str(r, "id")
			if _, e, code := h.run("answer", id, password); code != 2 || !strings.Contains(e, "never put a password") {
				t.Fatalf("a password on the command line: exit %d %q", code, e)
			}
			out, e, code := h.runRaw(nil, password+"\n", "answer", "--control", h.ctl, "--stdin", id)
			if code != 0 {
				t.Fatalf("answer --stdin: exit %d %q %q", code, out, e)
			}
			text, _ := w.endOf(mark, sid)
			if !strings.HasPrefix(text, "sudo: password received ("+itoa(len(password))+" chars") {
				t.Fatalf("sudo turn ended %q", text)
			}
			w.Stop()
			for what, s := range map[string]string{"watch output": w.Output(), "watch stderr": w.Stderr(), "answer output": out + e} {
				if strings.Contains(s, password) {
					t.Errorf("the password is in %s", what)
				}
			}
			if hits := filesContain(t, h.dir, password); len(hits) > 0 {
				t.Errorf("the password landed on disk: %v", hits)
			}
		})
	}
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n))
}

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// TestInterruptAndStop: herald stop interrupts a turn on the real gateway
// (message.complete status interrupted) and one waiting on an approval
// (the real queue resolves it as deny, the command is blocked).
func TestInterruptAndStop(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realWS(t, v)
			h := newHerald(t)
			w := h.connectWS(p)

			mark := w.Mark()
			sid := h.ask("slow 40")
			w.Event(mark, "message.delta", func(m map[string]any) bool { return str(m, "event", "session") == sid })
			if out := h.mustRun("stop", sid[:6]); !strings.Contains(out, "turn interrupted (confirmed by the gateway)") {
				t.Fatalf("stop printed %q", out)
			}
			if _, status := w.endOf(mark, sid); status != "interrupted" {
				t.Fatalf("the stopped turn ended %q", status)
			}

			mark = w.Mark()
			h.mustRun("ask", "--session", sid, "approve-me: rm -rf ./stop-me")
			r := w.Approval(mark, "arrived", func(m map[string]any) bool { return str(m, "request", "session") == sid })
			h.mustRun("stop", sid[:6])
			text, _ := w.endOf(mark, sid)
			if !strings.HasPrefix(text, "blocked: rm -rf ./stop-me") {
				t.Fatalf("the stopped approval's turn ended %q, want blocked", text)
			}
			// The approval does not stay pending in Herald.
			w.Approval(mark, "updated", func(m map[string]any) bool {
				return str(m, "id") == str(r, "id") && str(m, "request", "state") != "pending"
			})
		})
	}
}

// TestGatewayRestartWhileConnected: the real gateway restarts under a
// connected Herald; Herald reconnects on its own and works again.
func TestGatewayRestartWhileConnected(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := hermespeer.Start(t, hermespeer.WS, v)
			h := newHerald(t)
			w := h.connectWS(p)
			mark := w.Mark()
			p.Restart(t)
			w.Wait(mark, "a status other than connected", func(m map[string]any) bool {
				return m["type"] == "status" && field(m, "status", "state") != "connected"
			})
			w.Connected(mark)
			mark = w.Mark()
			sid := h.ask("approve-me: git reset --hard HEAD")
			r := w.Approval(mark, "arrived", nil)
			h.mustRun("approve", str(r, "id"), "once")
			if text, _ := w.endOf(mark, sid); !strings.HasPrefix(text, "approved: ") {
				t.Fatalf("after the restart the turn ended %q", text)
			}
		})
	}
}

// TestHeraldRestartWithApprovalPending: herald watch stops (Ctrl-C) while
// an approval waits on the real gateway; the next watch over the same
// history shows it again, marked uncertain, and what it can still do is
// answered through the real queue.
func TestHeraldRestartWithApprovalPending(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := realWS(t, v)
			h := newHerald(t)
			w := h.connectWS(p)
			mark := w.Mark()
			sid := h.ask("approve-me: rm -rf ./restart-me")
			first := w.Approval(mark, "arrived", nil)
			stored := str(first, "request", "stored_session")
			if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := w.Exited(); code != 0 {
				t.Fatalf("watch after Ctrl-C: exit %d", code)
			}

			w2 := h.connectWS(p, "--session", stored)
			again := w2.Approval(0, "arrived", func(m map[string]any) bool { return str(m, "request", "key") == str(first, "request", "key") })
			if field(again, "request", "uncertain") != true {
				t.Fatalf("the restored approval is not marked uncertain: %s", fmtRec(again))
			}
			// Whatever it offers now, deny is always safe and must reach the
			// real queue.
			h.mustRun("approve", str(again, "id"), "deny")
			text, _ := w2.endOf(0, sid)
			if !strings.HasPrefix(text, "blocked: rm -rf ./restart-me") {
				t.Fatalf("the turn ended %q, want blocked", text)
			}
		})
	}
}

// TestHeraldRestartSkipsSessionsThatEnded: Herald followed a session
// (--session, as the app's saved sessions), then stopped; the real
// gateway restarted meanwhile, so that session ended. The next Herald,
// given it and a live one, resumes only the live one and says in a
// notice that the ended one is no longer followed. On the server side the
// ended session stays ended: it is not listed live again, as a
// session.resume would have made it (building an agent for it).
func TestHeraldRestartSkipsSessionsThatEnded(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			p := hermespeer.Start(t, hermespeer.WS, v)
			session := func() created {
				a := dialRaw(t, "other client", p.URL)
				defer a.Close()
				a.WaitEvent(0, "gateway.ready", nil)
				s := a.Create()
				mark := a.Len()
				a.Submit(s.SessionID, "hello")
				a.WaitIdle(mark, s.SessionID) // its stored row exists now
				return s
			}
			ended := session()
			h := newHerald(t)
			w := h.connectWS(p, "--session", ended.StoredSessionID)
			w.notice(0, "followed", ended.StoredSessionID)
			if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if code := w.Exited(); code != 0 {
				t.Fatalf("watch after Ctrl-C: exit %d", code)
			}
			p.Restart(t) // while Herald is not running: the session ends
			live := session()

			w2 := h.connectWS(p, "--session", ended.StoredSessionID, "--session", live.StoredSessionID)
			w2.notice(0, "followed", live.StoredSessionID)
			obs := dialRaw(t, "observer", p.URL)
			list := string(obs.MustCall("session.active_list", map[string]any{}, nil).Result)
			if strings.Contains(list, ended.StoredSessionID) {
				t.Fatalf("the ended session %s is live again on the gateway: Herald resumed it\n%s", ended.StoredSessionID, list)
			}
			if !strings.Contains(list, live.StoredSessionID) {
				t.Fatalf("the live session %s is not listed:\n%s", live.StoredSessionID, list)
			}
			gone := w2.notice(0, "gone", ended.StoredSessionID)
			if text := str(gone, "notice", "text"); !strings.Contains(text, "no longer follows it") {
				t.Errorf("the gone notice says %q", text)
			}
		})
	}
}

// TestWrongTokenAndKey: a wrong token (gateway) or key (API server) ends
// herald watch with one line that says what to fix, and no secret in it.
func TestWrongTokenAndKey(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				name string
				args []string
			}{
				{"gateway token", []string{"--gateway", "lab=" + realWS(t, v).Base, "--token", "wrong-token-0123456789"}},
				{"api key", []string{"--api", "api=" + realAPI(t, v).Base, "--api-key", "wrong-key-0123456789abcdef"}},
			}
			for _, c := range cases {
				h := newHerald(t)
				w := h.watch(nil, c.args...)
				code := w.Exited()
				e := strings.TrimSpace(w.Stderr())
				if code == 0 || e == "" || strings.Contains(e, "\n") {
					t.Errorf("%s: exit %d, stderr %q; want non-zero and one line", c.name, code, e)
				}
				if strings.Contains(e+w.Output(), "wrong-") {
					t.Errorf("%s: the secret is printed: %q", c.name, e)
				}
				t.Logf("%s: %s", c.name, e)
			}
		})
	}
}

// TestSwappedPorts: the API server's address given to --gateway and the
// dashboard's given to --api (9119 and 8642 swapped) end herald watch
// with one line naming the right server and its default port.
func TestSwappedPorts(t *testing.T) {
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			for _, c := range []struct {
				name string
				args []string
				want []string
			}{
				{"API server as --gateway", []string{"--gateway", "lab=" + realAPI(t, v).Base, "--token", "some-token-0123456789"},
					[]string{"lab: ", "has no /api/ws endpoint", "point Herald at the Hermes dashboard (default port 9119)"}},
				{"dashboard as --api", []string{"--api", "lab=" + realWS(t, v).Base, "--api-key", "some-key-0123456789abcdef"},
					[]string{"lab: ", "has no /health endpoint", "point Herald at the Hermes API server", "default port 8642"}},
			} {
				h := newHerald(t)
				w := h.watch(nil, c.args...)
				code := w.Exited()
				e := strings.TrimSpace(w.Stderr())
				if code != 1 || strings.Contains(e, "\n") {
					t.Errorf("%s: exit %d, stderr %q; want 1 and one line", c.name, code, e)
				}
				for _, s := range c.want {
					if !strings.Contains(e, s) {
						t.Errorf("%s: %q does not say %q", c.name, e, s)
					}
				}
			}
		})
	}
}

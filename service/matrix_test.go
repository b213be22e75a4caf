package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/testwait"
)

// The acceptance matrix of issue 15: every approval scenario on every
// dialect, each stating what every surface shows. The window, the tray,
// the notification and herald watch all render the inbox's request (its
// state, command and choices) and the session list's row, so a scenario
// states those two, and whether the other client still receives the
// session (nothing stolen).
//
// Shown values:
//
//	"command"      pending, with its command and the gateway's choices
//	"unseen"       pending, titled for what it is ("may be waiting for
//	               approval"), no command, deny only
//	"elsewhere"    withdrawn: answered in another client
//	"expired"      timed out
//	"ended"        ended without Herald's answer (the turn moved on:
//	               answered or interrupted in another client)
//	"-"            nothing: Herald never had it
type matrixWant struct {
	shown  string
	kept   bool // the other client still receives the session's events
	follow bool // Herald's session list shows it followed
}

type matrixScenario struct {
	name string
	// want by dialect; a dialect absent from the map uses def.
	def  matrixWant
	want map[hermestest.Dialect]matrixWant
	run  func(t *testing.T, r *liveRig) (live string, peerKept bool)
}

// singleClient are the dialects that send each session to one client;
// FanOut (0.21.1) fans out, but Herald cannot tell it from 0.20.6 and
// treats it as single-client: nothing is stolen there either.
var singleClient = []hermestest.Dialect{hermestest.Legacy, hermestest.Replay, hermestest.Modern}

// per sets want for several dialects.
func per(w matrixWant, ds ...hermestest.Dialect) map[hermestest.Dialect]matrixWant {
	m := map[hermestest.Dialect]matrixWant{}
	for _, d := range ds {
		m[d] = w
	}
	return m
}

func merge(ms ...map[hermestest.Dialect]matrixWant) map[hermestest.Dialect]matrixWant {
	out := map[hermestest.Dialect]matrixWant{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// stepUntilFollowed runs listings until Herald follows live.
func (r *liveRig) stepUntilFollowed(live string) {
	r.t.Helper()
	for i := 0; i < 4; i++ {
		r.step()
		if row, ok := r.row(live); ok && row.Followed {
			return
		}
	}
	r.t.Fatalf("Herald never followed %s", live)
}

// shownFor is what the inbox shows for the session's approval.
func (r *liveRig) shownFor(live string) string {
	var got []approval.Request
	for _, q := range r.svc.Inbox().Snapshot().Requests {
		if q.Session == live && q.Kind == approval.KindApproval {
			got = append(got, q)
		}
	}
	if len(got) == 0 {
		return "-"
	}
	q := got[len(got)-1]
	switch {
	case q.State == approval.StatePending && q.Command == "" && slices.Equal(q.Choices, []string{"deny"}):
		return "unseen"
	case q.State == approval.StatePending && q.Command != "":
		return "command"
	case q.State == approval.StateExpired:
		return "expired"
	case q.State == approval.StateCancelled && q.Outcome.Reason == approval.CancelResolvedElsewhere:
		return "elsewhere"
	case !q.State.Live():
		return "ended"
	}
	return string(q.State)
}

func (r *liveRig) ask(live, cmd string) <-chan string {
	r.t.Helper()
	_, done, err := r.srv.RequestApproval(live, hermestest.ApprovalSpec{Command: cmd})
	if err != nil {
		r.t.Fatal(err)
	}
	return done
}

// settle lets listings and the quiet check run.
func (r *liveRig) settle() {
	for i := 0; i <= int(gateway.QuietAfter/listEvery)+1; i++ {
		r.step()
	}
}

func matrixScenarios() []matrixScenario {
	cmd := "rm -rf /srv/build"
	all := func(w matrixWant) map[hermestest.Dialect]matrixWant { return per(w, hermestest.Dialects...) }
	return []matrixScenario{{
		name: "herald's own session",
		want: all(matrixWant{shown: "command", kept: true, follow: true}),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			r.connect()
			c, _ := r.svc.gatewayClient("lab")
			ref, err := c.CreateSession(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Call(context.Background(), "prompt.submit", map[string]any{"session_id": ref.ID, "text": "hold"}, nil); err != nil {
				t.Fatal(err)
			}
			r.step()
			r.ask(ref.ID, cmd)
			r.wait("the approval", func() bool { return r.shownFor(ref.ID) != "-" })
			return ref.ID, true
		},
	}, {
		name: "another client's session, the client stays",
		// Single-client gateways: following takes the events (said in
		// the followed notice); fan-out: both clients get them.
		want: merge(per(matrixWant{shown: "command", kept: false, follow: true}, singleClient...),
			per(matrixWant{shown: "command", kept: true, follow: true}, hermestest.FanOut, hermestest.Requests)),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			r.connect()
			live, _ := r.foreignSession()
			r.stepUntilFollowed(live)
			r.ask(live, cmd)
			r.wait("the approval", func() bool { return r.shownFor(live) != "-" })
			return live, r.peer.Consumer(live) == "peer"
		},
	}, {
		name: "another client's session, the client is gone",
		want: all(matrixWant{shown: "command", kept: false, follow: true}),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			r.connect()
			live, _ := r.foreignSession()
			r.peer.Close()
			r.stepUntilFollowed(live)
			r.ask(live, cmd)
			r.wait("the approval", func() bool { return r.shownFor(live) != "-" })
			return live, false
		},
	}, {
		name: "asked before Herald connected",
		// Gateways that list open requests give the command; the others
		// never send it again: Herald says plainly it may be waiting.
		want: merge(per(matrixWant{shown: "unseen", follow: true}, hermestest.Legacy, hermestest.Replay),
			per(matrixWant{shown: "unseen", kept: true, follow: true}, hermestest.FanOut),
			per(matrixWant{shown: "command", follow: true}, hermestest.Modern),
			per(matrixWant{shown: "command", kept: true, follow: true}, hermestest.Requests)),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			live, _ := r.foreignSession()
			r.ask(live, cmd)
			r.connect()
			r.stepUntilFollowed(live)
			r.settle()
			r.wait("what Herald shows", func() bool { return r.shownFor(live) != "-" })
			return live, r.peer.Consumer(live) == "peer"
		},
	}, {
		name: "session started after Herald connected, asked before Herald followed",
		want: merge(per(matrixWant{shown: "unseen", follow: true}, hermestest.Legacy, hermestest.Replay),
			per(matrixWant{shown: "unseen", kept: true, follow: true}, hermestest.FanOut),
			per(matrixWant{shown: "command", follow: true}, hermestest.Modern),
			per(matrixWant{shown: "command", kept: true, follow: true}, hermestest.Requests)),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			r.connect()
			live, _ := r.foreignSession()
			r.ask(live, cmd)
			r.stepUntilFollowed(live)
			r.settle()
			r.wait("what Herald shows", func() bool { return r.shownFor(live) != "-" })
			return live, r.peer.Consumer(live) == "peer"
		},
	}, {
		name: "answered in another client",
		// Server-request gateways withdraw it (request.cancel); on the
		// event dialects the other client can answer FIFO only, and
		// Herald learns it from the turn's next events.
		want: merge(per(matrixWant{shown: "ended", follow: true}, hermestest.Legacy, hermestest.Replay),
			per(matrixWant{shown: "ended", kept: true, follow: true}, hermestest.FanOut),
			per(matrixWant{shown: "elsewhere", follow: true}, hermestest.Modern),
			per(matrixWant{shown: "elsewhere", kept: true, follow: true}, hermestest.Requests)),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			r.connect()
			live, _ := r.foreignSession()
			r.stepUntilFollowed(live)
			id, done, _ := r.srv.RequestApproval(live, hermestest.ApprovalSpec{Command: cmd})
			r.wait("the approval", func() bool { return r.shownFor(live) == "command" })
			if _, err := r.srv.ResolveElsewhere(live, id, "deny"); err != nil {
				t.Fatal(err)
			}
			<-done
			// The agent goes on: its tool reports the outcome.
			r.srv.Emit(live, "tool.complete", map[string]any{"tool_id": "call_1", "name": "terminal", "args": map[string]any{"command": cmd},
				"result": map[string]any{"output": "", "exit_code": -1, "error": "BLOCKED: Command denied by user. The user has NOT consented to this action."}})
			r.wait("withdrawn", func() bool { return r.shownFor(live) != "command" })
			return live, r.peer.Consumer(live) == "peer"
		},
	}, {
		name: "times out",
		want: merge(per(matrixWant{shown: "expired", follow: true}, singleClient...),
			per(matrixWant{shown: "expired", kept: true, follow: true}, hermestest.FanOut, hermestest.Requests)),
		run: func(t *testing.T, r *liveRig) (string, bool) {
			r.connect()
			live, _ := r.foreignSession()
			r.stepUntilFollowed(live)
			r.ask(live, cmd)
			r.wait("the approval", func() bool { return r.shownFor(live) == "command" })
			for i := 0; i < int(approval.DefaultTimeout/listEvery)+2 && r.shownFor(live) == "command"; i++ {
				r.step()
			}
			r.wait("expired", func() bool { return r.shownFor(live) != "command" })
			return live, r.peer.Consumer(live) == "peer"
		},
	}}
}

// TestApprovalMatrix runs every scenario on every dialect. On fan-out
// dialects nothing is lost and nothing is stolen; on single-client ones
// nothing is lost where Hermes allows, and what Herald cannot see is
// shown as such (unseen, deny only).
func TestApprovalMatrix(t *testing.T) {
	t.Parallel()
	for _, sc := range matrixScenarios() {
		for _, d := range hermestest.Dialects {
			t.Run(fmt.Sprintf("%s/%s", sc.name, d), func(t *testing.T) {
				t.Parallel()
				r := newLiveRigOpts(t, hermestest.Options{Dialect: d}, FollowAuto)
				live, kept := sc.run(t, r)
				row, _ := r.row(live)
				got := matrixWant{shown: r.shownFor(live), kept: kept, follow: row.Followed}
				if want := sc.want[d]; got != want {
					t.Fatalf("surfaces show %+v, want %+v", got, want)
				}
				if got.shown == "unseen" {
					q := r.svc.Inbox().Pending()
					for _, p := range q {
						if p.Session == live && !strings.Contains(p.Description, "may be waiting") {
							t.Fatalf("an unseen approval must say what it is: %q", p.Description)
						}
					}
				}
				r.srv.Release(live)
			})
		}
	}
}

// TestApprovalMatrixTwoHeralds: two Herald instances on one gateway. On
// a fan-out gateway both show the approval, the first answer wins and
// the other withdraws it as answered elsewhere; on a single-client one
// the second takes the session and the first says so.
func TestApprovalMatrixTwoHeralds(t *testing.T) {
	t.Parallel()
	for _, d := range hermestest.Dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			a := newLiveRigOpts(t, hermestest.Options{Dialect: d}, FollowAuto)
			b := &liveRig{t: t, srv: a.srv, clk: a.clk, ch: newChanges(), stop: make(chan struct{}), peer: a.peer}
			b.start(FollowAuto)
			a.connect()
			b.connect()
			live, _ := a.foreignSession()
			a.stepUntilFollowed(live)
			for i := 0; i < 3; i++ { // b lists on the same clock, and follows too
				a.step()
				b.wait("b's listing", func() bool { return !b.listed().At.Before(a.clk.Now()) })
			}
			b.wait("b follows", func() bool { row, _ := b.row(live); return row.Followed })
			_, done, _ := a.srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf /srv/x"})
			fan := d == hermestest.Requests
			if fan {
				a.wait("a shows it", func() bool { return a.shownFor(live) == "command" })
				b.wait("b shows it", func() bool { return b.shownFor(live) == "command" })
				q, _ := a.pendingFor(live)
				if err := a.svc.Answer(context.Background(), ShortKey(q.Key), "deny", "test", false); err != nil {
					t.Fatalf("%v; gateway answers %+v; request %+v", err, a.srv.Answers(), q)
				}
				<-done
				b.wait("b withdraws it", func() bool { return b.shownFor(live) == "elsewhere" })
				return
			}
			if d == hermestest.FanOut {
				// Fan-out with event approvals: both show it.
				a.wait("a shows it", func() bool { return a.shownFor(live) == "command" })
				b.wait("b shows it", func() bool { return b.shownFor(live) == "command" })
				a.srv.Release(live)
				return
			}
			// Single client: exactly one instance receives it.
			either := func() <-chan struct{} { // a change in either instance
				out := make(chan struct{})
				ca, cb := a.changed(), b.changed()
				go func() {
					select {
					case <-ca:
					case <-cb:
					}
					close(out)
				}()
				return out
			}
			testwait.Until(t, srcGuard, "one instance shows it", either, func() bool { return a.shownFor(live) == "command" || b.shownFor(live) == "command" })
			if a.shownFor(live) == "command" && b.shownFor(live) == "command" {
				t.Fatal("both instances show an approval a single-client gateway sent once")
			}
			a.srv.Release(live)
			_ = time.Second
		})
	}
}

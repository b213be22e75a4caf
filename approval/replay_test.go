package approval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// The captures in testdata are real 0.18.2 sessions (copied from
// /work/shared/hermes-wire/ws-gateway). Replaying them feeds the gateway's
// frames to the inbox as the client would and answers where the captured
// client answered, with the gateway's captured reply.

type captureLine struct {
	at         time.Duration
	conn, body string
	out        bool // client to server
}

var captureRE = regexp.MustCompile(`^\+\s+([\d.]+)\s+(\S+)\s+(<<<|>>>)\s+(.*)$`)

func readCapture(t *testing.T, name string) []captureLine {
	t.Helper()
	fh, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []captureLine
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := captureRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		secs, _ := strconv.ParseFloat(m[1], 64)
		out = append(out, captureLine{at: time.Duration(secs * float64(time.Second)), conn: m[2], out: m[3] == ">>>", body: m[4]})
	}
	return out
}

func TestReplayCaptures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string // final state (and choice or reason) per request
		// refused: the captured client approved after a reconnect that
		// 0.18.2 cannot replay (04), or two approvals waiting at once
		// with one "all" answer (11); Herald refuses that (it cannot
		// prove the request is the session's oldest; two waiting at once
		// accept only deny, order.go) and sends nothing, then or later in
		// that session: what the captured client answered from then on
		// is another client's answer to Herald
		refused bool
	}{
		{"01_approve_once.txt", []string{"resolved once"}, false},
		{"02_deny.txt", []string{"resolved deny"}, false},
		{"04_disconnect_resume_pending_approval.txt", []string{"pending "}, true},
		{"08_interrupt_pending_approval.txt", []string{"cancelled interrupted"}, false},
		// 11: the captured client's "all" ran both approvals that waited
		// at once; Herald, which refused that, sees them and the next one
		// run elsewhere (the event form ends a request Herald did not
		// answer only on a BLOCKED result), and the last denied there.
		{"11_approval_variants.txt", []string{"resolved session", "resolved always", "pending ", "pending ", "pending ", "cancelled interrupted"}, true},
		{"12_approval_timeout.txt", []string{"expired "}, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			lines := readCapture(t, tt.file)
			replies := map[string]json.RawMessage{} // conn/id -> result
			for _, l := range lines {
				if fr, err := wire.DecodeFrame([]byte(l.body)); err == nil && !l.out && fr.Kind == wire.KindResponse {
					replies[l.conn+"/"+string(fr.ID)] = fr.Result
				}
			}
			stored := map[string]string{} // live -> stored session
			refused := false              // Herald refused an answer it could not bind
			for _, l := range lines {
				f.clk.Advance(t0.Add(l.at).Sub(f.clk.Now()))
				fr, err := wire.DecodeFrame([]byte(l.body))
				if err != nil {
					t.Fatal(err)
				}
				reply := replies[l.conn+"/"+string(fr.ID)]
				switch {
				case !l.out && fr.Method == "event":
					var p struct {
						Type      string          `json:"type"`
						SessionID string          `json:"session_id"`
						Payload   json.RawMessage `json:"payload"`
					}
					_ = json.Unmarshal(fr.Params, &p)
					ev := wire.Event{Gateway: "g1", Session: p.SessionID, StoredSession: stored[p.SessionID], Kind: p.Type, Payload: p.Payload, ReceivedAt: f.clk.Now()}
					f.in.Ingest(ev)
				case l.out && fr.Method == "session.create":
					var r struct {
						Live   string `json:"session_id"`
						Stored string `json:"stored_session_id"`
					}
					_ = json.Unmarshal(reply, &r)
					stored[r.Live] = r.Stored
				case l.out && fr.Method == "session.resume":
					// What the client reports after re-attaching a 0.18.2 session.
					for live, st := range stored {
						f.in.Ingest(withStored(resync("g1", live, "no-replay", f.clk.Now()), st))
					}
				case l.out && fr.Method == "approval.respond":
					refused = replayAnswer(t, f, fr.Params, reply, refused) || refused
				}
			}
			var got []string
			for _, r := range f.in.Snapshot().Requests {
				got = append(got, fmt.Sprintf("%s %s%s", r.State, r.Outcome.Choice, r.Outcome.Reason))
			}
			if !slices.Equal(got, tt.want) || refused != tt.refused {
				t.Fatalf("final states %q refused %v, want %q %v", got, refused, tt.want, tt.refused)
			}
		})
	}
}

// replayAnswer answers as the captured client did, where Herald would, and
// reports whether Herald refused an approval it could not bind. Aside
// (after such a refusal), Herald sends nothing; an invalid choice is
// still refused.
func replayAnswer(t *testing.T, f *fixture, params, reply json.RawMessage, aside bool) (refused bool) {
	t.Helper()
	var p struct {
		SessionID string `json:"session_id"`
		Choice    string `json:"choice"`
		All       bool   `json:"all"`
	}
	var r struct {
		Resolved int `json:"resolved"`
	}
	_ = json.Unmarshal(params, &p)
	_ = json.Unmarshal(reply, &r)
	var targets []Request
	for _, q := range f.in.Pending() {
		if q.Session == p.SessionID {
			targets = append(targets, q)
		}
	}
	if len(targets) == 0 {
		if r.Resolved != 0 {
			t.Fatalf("the gateway resolved %d, but Herald holds nothing pending", r.Resolved)
		}
		return false
	}
	if !p.All {
		targets = targets[:1]
	}
	choice := p.Choice
	if choice == "" {
		choice = ChoiceDeny // the gateway's default; Herald always names the choice
	}
	if !slices.Contains(knownChoices, choice) {
		if err := f.in.Answer(ctx, targets[0].Key, choice, "replay", true); err == nil {
			t.Fatalf("Herald sent the invalid choice %q", choice)
		}
		choice = ChoiceOnce
	}
	if aside {
		return false
	}
	f.ans["g1"].set(min(r.Resolved, 1), nil, nil)
	for _, q := range targets {
		err := f.in.Answer(ctx, q.Key, choice, "replay", true)
		var ue *UnboundError
		switch {
		case q.Unbound != "" && choice != ChoiceDeny:
			if !errors.As(err, &ue) {
				t.Fatalf("approving unbound %s: %v, want an UnboundError", q.Key, err)
			}
			refused = true
		case err != nil:
			t.Fatalf("answer %s: %v", q.Key, err)
		}
	}
	return refused
}

package approval

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestSameIDAfterRestart: after a restart the gateway offers a restored
// request again under its id with its command: it is that request (one
// key, bound by the id), never a second copy answerable by the same id.
func TestSameIDAfterRestart(t *testing.T) {
	t.Parallel()
	const cmd = "rm -rf ./a"
	for _, ev := range []wire.Event{
		event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "request_id": "q1", "choices": knownChoices}),
		srq("g1", "s1", "7", cmd, t0),
	} {
		rig := newRestartRig(t)
		in, _, stop := rig.start()
		in.Ingest(ev)
		key := in.Pending()[0].Key
		stop()
		in, _, stop = rig.start()
		in.Ingest(ev)
		in.Ingest(ev)
		p := in.Pending()
		if len(p) != 1 || p[0].Key != key || p[0].Uncertain || p[0].Unbound != "" || p[0].Command != cmd {
			t.Fatalf("%s: pending %+v", ev.Kind, p)
		}
		if err := in.Answer(context.Background(), key, ChoiceOnce, "window", false); err != nil {
			t.Fatalf("%s: %v", ev.Kind, err)
		}
		stop()
		if s := rig.ans.sent(); len(s) != 1 || s[0].requestID != firstOf(ev.RequestID, "q1") {
			t.Fatalf("%s: sent %+v", ev.Kind, s)
		}
	}
}

// TestReusedIDWhileAnswering: the gateway uses a restored request's id
// for another command while Herald's answer to it is on its way: the
// answer may reach either, so its outcome is unknown, never resolved.
func TestReusedIDWhileAnswering(t *testing.T) {
	t.Parallel()
	in, key, err := answerWhileIDReused(t, 1, nil)
	if !errors.As(err, new(*UnknownOutcomeError)) {
		t.Fatalf("answer: %v", err)
	}
	if r, _ := in.Get(key); r.State != StateSentUnknown || r.Command != "rm -rf ./a" {
		t.Fatalf("answered request %+v", r)
	}
}

// answerWhileIDReused restores an approval ("rm -rf ./a", queue id q1)
// after a restart and denies it while the gateway uses q1 for another
// command; the gateway's reply is resolved and sendErr.
func answerWhileIDReused(t *testing.T, resolved int, sendErr error) (*Inbox, string, error) {
	t.Helper()
	queued := func(cmd string) wire.Event {
		return event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "request_id": "q1", "choices": knownChoices})
	}
	rig := newRestartRig(t)
	in, _, stop := rig.start()
	in.Ingest(queued("rm -rf ./a"))
	stop()
	in, _, stop = rig.start()
	t.Cleanup(stop)
	key := in.Pending()[0].Key
	rig.ans.set(resolved, sendErr, func() { in.Ingest(queued("git push --force")) })
	err := in.Answer(context.Background(), key, ChoiceDeny, "window", false)
	rig.ans.set(1, nil, nil)
	return in, key, err
}

// TestReusedIDWhileAnsweringNotSent: as TestReusedIDWhileAnswering, but
// the answer was never sent: the restored request is superseded, as it
// would have been had no answer been on its way, and not offered again
// under an id that now names another command.
func TestReusedIDWhileAnsweringNotSent(t *testing.T) {
	t.Parallel()
	in, key, err := answerWhileIDReused(t, 0, errors.New("not connected to the gateway"))
	var ended *EndedError
	if !errors.As(err, &ended) || ended.Sent {
		t.Fatalf("answer: %v", err)
	}
	r, _ := in.Get(key)
	if r.State != StateCancelled || r.Outcome.Reason != CancelSuperseded || r.Command != "rm -rf ./a" {
		t.Fatalf("the restored request after an unsent answer: %s %+v", r.State, r.Outcome)
	}
	if err := in.Answer(context.Background(), key, ChoiceDeny, "window", false); err == nil {
		t.Fatal("a superseded request took a second answer")
	}
}

// TestReusedIDAfterRestart: Herald restarts and restores a waiting request
// (deny-only until the gateway lists it by its id again); the gateway then
// uses the same id for another command. The restored request keeps the
// command shown for it and can no longer be answered by that id (it is
// superseded), the new one gets its own key and is deny-only until a
// listing proves what the id names, and the audit log never shows two
// commands under one key.
func TestReusedIDAfterRestart(t *testing.T) {
	t.Parallel()
	const shownCmd, newCmd = "rm -rf ./a", "git push --force"
	queued := func(sid, cmd string, at time.Time) wire.Event {
		return event("g1", sid, wire.ApprovalRequest, at, map[string]any{"command": cmd, "request_id": "q1", "choices": knownChoices})
	}
	tests := []struct {
		name    string
		first   func(at time.Time) wire.Event
		reused  func(at time.Time) wire.Event
		listing wire.Event
		boundID string // the id an answer to the new request is sent by, "" if none
	}{
		{"queue id", func(at time.Time) wire.Event { return queued("s1", shownCmd, at) }, func(at time.Time) wire.Event { return queued("s1", newCmd, at) },
			listedEv("g1", "s1", true, listedEntry{RequestID: "q1", Command: newCmd}), "q1"},
		{"server request id", func(at time.Time) wire.Event { return srq("g1", "s1", "7", shownCmd, at) }, func(at time.Time) wire.Event { return srq("g1", "s1", "7", newCmd, at) },
			listedEv("g1", "s1", true, listedEntry{ID: "7", RequestID: "q-7", Command: newCmd}), "7"},
		{"server request id in another session", func(at time.Time) wire.Event { return srq("g1", "s1", "7", shownCmd, at) }, func(at time.Time) wire.Event { return srq("g1", "s2", "7", newCmd, at) },
			// (A server request's id is the connection's: one session's
			// listing cannot say what it names in another.)
			listedEv("g1", "s2", true, listedEntry{ID: "7", RequestID: "q-7", Command: newCmd}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rig := newRestartRig(t)
			in, _, stop := rig.start()
			in.Ingest(tt.first(t0))
			stop()
			rig.clk.Advance(time.Second)
			in, _, stop = rig.start()
			defer stop()
			p := in.Pending()
			if len(p) != 1 || p[0].Command != shownCmd || !p[0].Uncertain {
				t.Fatalf("restored: %+v", p)
			}
			shown := p[0] // what the user sees (a notification, the window)
			in.Ingest(tt.reused(rig.clk.Now()))

			// The restored request still shows its own command, and an
			// answer on it reaches nothing: the gateway now names another
			// command by its id.
			old, _ := in.Get(shown.Key)
			if old.Command != shownCmd {
				t.Errorf("the restored request's key now shows %q (was %q)", old.Command, shownCmd)
			}
			for _, choice := range []string{ChoiceOnce, ChoiceDeny} {
				if err := in.Answer(context.Background(), shown.Key, choice, "window", false); err == nil {
					t.Errorf("answer %s on the superseded request was sent", choice)
				}
			}
			if old, _ = in.Get(shown.Key); old.State != StateCancelled || old.Outcome.Reason != CancelSuperseded {
				t.Errorf("the restored request is %s (%s) after its id was reused: %+v", old.State, old.Outcome.Reason, old)
			}
			if s := rig.ans.sent(); len(s) != 0 {
				t.Fatalf("answers on the restored request went out: %+v", s)
			}

			// The new request: its own key, deny-only until proven.
			var fresh Request
			for _, r := range in.Pending() {
				if r.Command == newCmd {
					fresh = r
				}
			}
			if fresh.Key == "" || fresh.Key == shown.Key {
				t.Fatalf("new request %+v (restored key %s)", fresh, shown.Key)
			}
			if fresh.Conflict == "" || fresh.Uncertain {
				t.Errorf("new request under a reused id: conflict %q uncertain %v", fresh.Conflict, fresh.Uncertain)
			}
			if err := in.Answer(context.Background(), fresh.Key, ChoiceOnce, "window", false); !errors.As(err, new(*ConflictError)) {
				t.Fatalf("approve a request whose id the gateway reused: %v", err)
			}
			// A complete listing naming the id with the new command alone
			// proves what an answer by that id reaches.
			in.Ingest(tt.listing)
			err := in.Answer(context.Background(), fresh.Key, ChoiceOnce, "window", false)
			switch s := rig.ans.sent(); {
			case tt.boundID == "" && (err == nil || len(s) != 0):
				t.Fatalf("approved after a listing of another session: %v, sent %+v", err, s)
			case tt.boundID != "" && err != nil:
				t.Fatalf("approve after the listing: %v", err)
			case tt.boundID != "" && (len(s) != 1 || s[0].choice != ChoiceOnce || s[0].requestID != tt.boundID):
				t.Fatalf("sent %+v", s)
			}
			stop()

			// The audit log: one command per key, one arrival per key.
			commands, arrivals := map[string]string{}, map[string]int{}
			for _, e := range rig.entries() {
				if c, ok := commands[e.Key]; ok && c != e.Command && e.Command != "" {
					t.Errorf("the audit log shows %q and %q under one key %s", c, e.Command, e.Key)
				}
				if e.Command != "" {
					commands[e.Key] = e.Command
				}
				if e.Kind == ChangeArrived {
					arrivals[e.Key]++
				}
			}
			if commands[shown.Key] != shownCmd || commands[fresh.Key] != newCmd {
				t.Errorf("audit commands %v", commands)
			}
			for k, n := range arrivals {
				if n > 1 && k != shown.Key {
					t.Errorf("%d arrivals under %s", n, k)
				}
			}
		})
	}
}

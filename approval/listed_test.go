package approval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// listedEv is an approvalsListed event as a gateway client emits it.
func listedEv(gw, sid string, complete bool, entries ...listedEntry) wire.Event {
	if entries == nil {
		entries = []listedEntry{}
	}
	return event(gw, sid, approvalsListed, t0, listing{SessionID: sid, Complete: complete, Approvals: entries})
}

// TestListedReconcilesUnknown: an answer of unknown outcome is pending
// again only when the gateway lists its request by its own id with the
// same command; one no longer listed stays unknown, said plainly, until
// its deadline; anything else concludes nothing.
func TestListedReconcilesUnknown(t *testing.T) {
	t.Parallel()
	const cmd = "rm -rf ./A-build-cache"
	srqA := srq("g1", "s1", "srq-a", cmd, t0)
	queued := event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "request_id": "qa", "choices": knownChoices})
	tests := []struct {
		name    string
		arrive  wire.Event
		listing wire.Event
		state   State
		detail  string
		resend  string // the id a second answer carries, if it may be sent
	}{
		{"srq listed by its id", srqA, listedEv("g1", "s1", true, listedEntry{ID: "srq-a", RequestID: "q-srq-a", Command: cmd}), StatePending, listedAgainDetail, "srq-a"},
		{"srq listed by its queue id", srqA, listedEv("g1", "s1", true, listedEntry{RequestID: "q-srq-a", Command: cmd}), StatePending, listedAgainDetail, "srq-a"},
		{"same id, another command", srqA, listedEv("g1", "s1", true, listedEntry{ID: "srq-a", Command: "git push --force"}), StateSentUnknown, UnknownDetail, ""},
		{"not listed", srqA, listedEv("g1", "s1", true, listedEntry{ID: "srq-b", Command: "ls"}), StateSentUnknown, listedGoneDetail, ""},
		{"not listed, list cut short", srqA, listedEv("g1", "s1", false), StateSentUnknown, UnknownDetail, ""},
		{"another session listed", srqA, listedEv("g1", "s2", true), StateSentUnknown, UnknownDetail, ""},
		{"another gateway listed", srqA, listedEv("g2", "s1", true), StateSentUnknown, UnknownDetail, ""},
		{"its id listed twice", srqA, listedEv("g1", "s1", true, listedEntry{ID: "srq-a", Command: cmd}, listedEntry{ID: "srq-a", Command: "ls"}), StateSentUnknown, UnknownDetail, ""},
		{"queue id listed", queued, listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: cmd}), StatePending, listedAgainDetail, "qa"},
		{"queue id not listed", queued, listedEv("g1", "s1", true), StateSentUnknown, listedGoneDetail, ""},
		{"id-less, another approval waits", legacy("g1", "s1", cmd, t0), listedEv("g1", "s1", true, listedEntry{RequestID: "qz", Command: cmd}), StateSentUnknown, UnknownDetail, ""},
		{"id-less, nothing waits", legacy("g1", "s1", cmd, t0), listedEv("g1", "s1", true), StateSentUnknown, listedGoneDetail, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			f.in.Ingest(tt.arrive)
			key := f.only(t).Key
			f.ans["g1"].set(0, lostAfterWrite, nil)
			if err := f.in.Answer(ctx, key, "once", "tray", false); !errors.As(err, new(*UnknownOutcomeError)) {
				t.Fatalf("answer: %v", err)
			}
			f.in.Ingest(tt.listing)
			r := f.get(t, key)
			if r.State != tt.state || !strings.Contains(r.Outcome.Detail, tt.detail) {
				t.Fatalf("after the listing: %s %q, want %s %q", r.State, r.Outcome.Detail, tt.state, tt.detail)
			}
			f.ans["g1"].set(1, nil, nil)
			err := f.in.Answer(ctx, key, "once", "window", false)
			sent := f.ans["g1"].sent()
			if tt.resend == "" {
				if err == nil || len(sent) != 1 {
					t.Fatalf("a second answer was accepted (%v), %d sent", err, len(sent))
				}
				if tt.state == StateSentUnknown {
					// Still unknown: at the deadline it says so for good.
					f.clk.Advance(DefaultTimeout)
					if r := f.get(t, key); r.State != StateOutcomeUnknown {
						t.Fatalf("at the deadline: %s", r.State)
					}
				}
				return
			}
			if err != nil || len(sent) != 2 || sent[1].requestID != tt.resend {
				t.Fatalf("answer again: %v, sent %+v, want it bound to %q", err, sent, tt.resend)
			}
		})
	}
}

// TestReconnectCancelKeepsUnknown: the gateway client's synthetic cancel
// for a request not open after a reconnect leaves an answer of unknown
// outcome unknown (not ended), with a plain reason.
func TestReconnectCancelKeepsUnknown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-a", "rm -rf ./a", t0))
	key := f.only(t).Key
	f.ans["g1"].set(0, lostAfterWrite, nil)
	_ = f.in.Answer(ctx, key, "once", "tray", false)
	f.in.Ingest(cancel("g1", "s1", "srq-a", notPendingAfterReconnect, t0))
	if r := f.get(t, key); r.State != StateSentUnknown || r.Outcome.Detail != listedGoneDetail {
		t.Fatalf("after the reconnect: %s %q", r.State, r.Outcome.Detail)
	}
}

// TestListedRestoresChoices: a request restored after a restart is
// deny-only until the gateway lists it by its own queue id with the same
// command; then it regains the choices recorded for it, never more and
// never more than the gateway offers now.
func TestListedRestoresChoices(t *testing.T) {
	t.Parallel()
	const cmd = "git push --force origin main"
	queued := func(choices []string) wire.Event {
		return event("g1", "s1", wire.ApprovalRequest, t0, map[string]any{"command": cmd, "request_id": "qa", "choices": choices})
	}
	tests := []struct {
		name    string
		arrive  wire.Event
		listing wire.Event
		want    []string
	}{
		{"listed by its id", queued(knownChoices), listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: cmd}), knownChoices},
		{"listed offering fewer", queued(knownChoices), listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: cmd, Choices: []string{"once", "deny"}}), []string{"once", "deny"}},
		{"listed offering more than recorded", queued([]string{"once", "deny"}), listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: cmd, Choices: knownChoices}), []string{"once", "deny"}},
		{"same id, another command", queued(knownChoices), listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: "rm -rf ~"}), []string{ChoiceDeny}},
		{"not listed", queued(knownChoices), listedEv("g1", "s1", true, listedEntry{RequestID: "qb", Command: cmd}), []string{ChoiceDeny}},
		{"its id listed twice", queued(knownChoices), listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: cmd}, listedEntry{RequestID: "qa", Command: "rm -rf ~"}), []string{ChoiceDeny}},
		{"another session", queued(knownChoices), listedEv("g1", "s2", true, listedEntry{RequestID: "qa", Command: cmd}), []string{ChoiceDeny}},
		{"server request id only", srq("g1", "s1", "srq-a", cmd, t0), listedEv("g1", "s1", true, listedEntry{ID: "srq-a", Command: cmd}), []string{ChoiceDeny}},
		{"server request by queue id only", srq("g1", "s1", "srq-a", cmd, t0), listedEv("g1", "s1", true, listedEntry{RequestID: "q-srq-a", Command: cmd}), []string{ChoiceDeny}},
		{"server request by both ids", srq("g1", "s1", "srq-a", cmd, t0), listedEv("g1", "s1", true, listedEntry{ID: "srq-a", RequestID: "q-srq-a", Command: cmd}), knownChoices},
		{"id-less", legacy("g1", "s1", cmd, t0), listedEv("g1", "s1", true, listedEntry{RequestID: "qa", Command: cmd}), []string{ChoiceDeny}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRestartRig(t)
			in, _, stop := r.start()
			in.Ingest(tt.arrive)
			key := in.Pending()[0].Key
			stop()
			r.clk.Advance(time.Second)
			in, _, stop = r.start()
			defer stop()
			in.Ingest(tt.listing)
			got, _ := in.Get(key)
			if !slices.Equal(got.Choices, tt.want) {
				t.Fatalf("choices after the listing: %v (unbound %q), want %v", got.Choices, got.Unbound, tt.want)
			}
			err := in.Answer(ctx, key, "once", "window", false)
			if approvable := slices.Contains(tt.want, "once"); approvable != (err == nil) {
				t.Fatalf("approve: %v", err)
			}
			bound := "qa"
			if tt.arrive.RequestID != "" {
				bound = tt.arrive.RequestID // a server request is answered by its own id
			}
			for _, s := range r.ans.sent() {
				if s.choice != ChoiceDeny && s.requestID != bound {
					t.Fatalf("an approval went out unbound: %+v", s)
				}
			}
		})
	}
}

// BenchmarkListingFullInbox: one listing of the most a client passes on
// (512 entries, each an id-less mismatch or a listed id) against a
// gateway's inbox at its bound of open requests (DefaultMaxPending, all in
// the listed session, every answer's outcome unknown). A listing arrives
// once per session per re-attach; this is its cost.
func BenchmarkListingFullInbox(b *testing.B) {
	f := newFixture(b, func(o *Options) { o.Notify = func(Change) {} })
	f.ans["g1"].set(0, lostAfterWrite, nil)
	for i := range DefaultMaxPending {
		id := fmt.Sprintf("srq-%d", i)
		f.in.Ingest(srq("g1", "s1", id, "rm -rf ./"+id, t0))
		_ = f.in.Answer(ctx, f.in.Pending()[i].Key, "deny", "tray", false)
	}
	var entries []listedEntry
	for i := range maxListed {
		entries = append(entries, listedEntry{ID: fmt.Sprintf("srq-%d", i+DefaultMaxPending/2), RequestID: fmt.Sprintf("q-%d", i), Command: "rm -rf ./elsewhere"})
	}
	ev := listedEv("g1", "s1", true, entries...)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.in.Ingest(ev)
	}
}

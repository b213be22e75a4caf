package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// nextOf reads one notification or fails the test.
func nextOf(t *testing.T, ctx context.Context, sub interface {
	Next(context.Context) (Notify, error)
}) Notify {
	t.Helper()
	n, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWatchInitialViewThenNumbered: with WatchInitial the first Notify is
// the View, numbered 1, holding what waits now (and no boot backlog on
// top of it); what follows is numbered on from 2.
func TestWatchInitialViewThenNumbered(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	s.onEvent(ev(wire.ApprovalRequest, "s1", map[string]any{"command": "rm -rf ./a", "choices": []string{"once", "deny"}}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	sub := s.Subscribe(WatchApprovals|WatchEvents|WatchInitial, 0)
	defer sub.Close()
	first := nextOf(t, ctx, sub)
	if first.Seq != 1 || first.View == nil || len(first.View.Approvals) != 1 || first.View.Approvals[0].Command != "rm -rf ./a" {
		t.Fatalf("first notification: seq %d view %+v, want the View with the waiting approval", first.Seq, first.View)
	}
	// Another session: a second approval of s1 would also change what s1's
	// first one accepts (two at once accept only deny) and republish it.
	s.onEvent(ev(wire.ApprovalRequest, "s2", map[string]any{"command": "rm -rf ./b", "choices": []string{"once", "deny"}}))
	var seqs []uint64
	var kinds []string
	for range 2 {
		n := nextOf(t, ctx, sub)
		seqs = append(seqs, n.Seq)
		switch {
		case n.Approval != nil:
			kinds = append(kinds, "approval "+n.Approval.Request.Command)
		case n.Event != nil:
			kinds = append(kinds, "event")
		}
	}
	if fmt.Sprint(seqs) != "[2 3]" || fmt.Sprint(kinds) != "[approval rm -rf ./b event]" {
		t.Fatalf("after the View: seqs %v, %v; want [2 3], the arrival then its event", seqs, kinds)
	}
	// Without WatchInitial a subscriber before the first source gets the
	// boot backlog instead, numbered from 1.
	old := s.Subscribe(WatchApprovals, 0)
	defer old.Close()
	if n := nextOf(t, ctx, old); n.Seq != 1 || n.Approval == nil || n.Approval.Request.Command != "rm -rf ./a" {
		t.Fatalf("boot backlog: %+v", n)
	}
}

// TestWatchInitialMissesNothing: approvals arrive while a surface
// subscribes with WatchInitial; each one is in the View or in the stream
// after it (a change published during the View may be in both), never in
// neither. Run with -race.
func TestWatchInitialMissesNothing(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	const total = 200
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range total {
			s.onEvent(ev(wire.ApprovalRequest, fmt.Sprintf("s%d", i), map[string]any{"command": fmt.Sprintf("echo %d", i), "choices": []string{"once", "deny"}}))
		}
	}()
	sub := s.Subscribe(WatchApprovals|WatchProblems|WatchInitial, 0)
	defer sub.Close()
	wg.Wait()
	s.problem("end", errors.New("all sent")) // the stream's end marker
	seen := map[string]bool{}
	v := nextOf(t, ctx, sub)
	if v.View == nil {
		t.Fatalf("first notification has no View: %+v", v)
	}
	for _, r := range v.View.Approvals {
		seen[r.Command] = true
	}
	for {
		n := nextOf(t, ctx, sub)
		if n.Lagged > 0 {
			t.Fatalf("lagged %d with a queue of %d", n.Lagged, DefaultQueue)
		}
		if n.Problem != nil {
			break
		}
		if n.Approval != nil && n.Approval.Kind == approval.ChangeArrived {
			seen[n.Approval.Request.Command] = true
		}
	}
	for i := range total {
		if !seen[fmt.Sprintf("echo %d", i)] {
			t.Fatalf("echo %d is neither in the View nor after it (%d seen)", i, len(seen))
		}
	}
}

// TestWatchLagKeepsTheView: a subscriber that does not read loses its
// oldest notifications, never the View; the next one it reads says how
// many were lost, and its number jumps by as many.
func TestWatchLagKeepsTheView(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	sub := s.Subscribe(WatchEvents|WatchInitial, 3)
	defer sub.Close()
	for i := range 10 {
		s.bus.publish(WatchEvents, Notify{Event: &wire.Event{Seq: uint64(i)}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n := nextOf(t, ctx, sub); n.View == nil || n.Seq != 1 || n.Lagged != 0 {
		t.Fatalf("first: %+v, want the View", n)
	}
	n := nextOf(t, ctx, sub)
	if n.Event.Seq != 8 || n.Lagged != 8 || n.Seq != 10 {
		t.Fatalf("after the View: event %d, seq %d, lagged %d; want event 8, seq 10 (2..9 lost), lagged 8", n.Event.Seq, n.Seq, n.Lagged)
	}
	if n := nextOf(t, ctx, sub); n.Event.Seq != 9 || n.Seq != 11 || n.Lagged != 0 {
		t.Fatalf("last: %+v", n)
	}
}

// TestWatchOverControl: `herald watch` beside a running Herald reads the
// same stream over the control socket: the View first, then every kind it
// watches, numbered, with each event's typed payload and a problem's
// text; a kind it does not know is refused with a sentence.
func TestWatchOverControl(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	s.onEvent(ev(wire.ApprovalRequest, "s1", map[string]any{"command": "rm -rf ./a", "choices": []string{"once", "deny"}}))
	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := WatchControl(ctx, path, 1<<20, 0); err == nil || !strings.Contains(err.Error(), "another version") {
		t.Fatalf("an unknown kind: %v", err)
	}
	w, err := WatchControl(ctx, path, WatchAll|WatchInitial, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	first := nextOf(t, ctx, w)
	if first.Seq != 1 || first.View == nil || len(first.View.Approvals) != 1 {
		t.Fatalf("first line: %+v", first)
	}
	s.onEvent(ev(wire.ToolStart, "s1", map[string]any{"name": "terminal", "context": "Running ls"}))
	s.problem("gw", errors.New("the gateway refused"))
	s.onStatus(source.Status{Gateway: "gw", State: source.StateConnected})
	var got []string
	last := first.Seq
	for len(got) < 3 {
		n := nextOf(t, ctx, w)
		if n.Seq != last+1 || n.Lagged != 0 {
			t.Fatalf("seq %d (lagged %d) after %d: %+v", n.Seq, n.Lagged, last, n)
		}
		last = n.Seq
		switch {
		case n.Event != nil:
			d, ok := n.Event.Data.(*wire.ToolStartPayload)
			if !ok || d.Context != "Running ls" {
				t.Fatalf("the event's payload did not cross: %#v", n.Event.Data)
			}
			// The watcher has no service to ask: the session's one
			// name comes with the event.
			if want := s.SessionName(n.Event.Gateway, n.Event.Session, n.Event.StoredSession); n.Name != want || n.Name == "" || n.Name == n.Event.Session {
				t.Fatalf("the event's session is named %q over the socket, %q in Herald", n.Name, want)
			}
			got = append(got, "event")
		case n.Problem != nil:
			got = append(got, "problem "+n.Problem.Source+": "+n.Problem.Err.Error())
		case n.Status != nil:
			got = append(got, "status "+string(n.Status.State))
		}
	}
	if want := "[event problem gw: the gateway refused status connected]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// TestWatchOverControlSlowReader: a watcher that stops reading is handled
// as a slow subscriber in the process: Herald's queue for it is bounded,
// publishing never blocks, and when it reads again every notification it
// lost is counted (Lagged, and the gap in Seq), the newest not lost.
func TestWatchOverControlSlowReader(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer s.Close()
	path := filepath.Join(t.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		t.Fatal(err)
	}
	w, err := WatchControl(ctx, path, WatchEvents, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Far more than the socket's buffers and the queue of 3 hold.
	big := json.RawMessage(`"` + strings.Repeat("x", 256<<10) + `"`)
	const total = 100
	for i := range total {
		s.bus.publish(WatchEvents, Notify{Event: &wire.Event{Kind: "x", Seq: uint64(i), Payload: big}})
	}
	read, lost, last := 0, 0, uint64(0)
	for last != total {
		n := nextOf(t, ctx, w)
		if n.Seq != last+1+uint64(n.Lagged) {
			t.Fatalf("seq %d after %d with %d lagged: a loss not counted", n.Seq, last, n.Lagged)
		}
		read, lost, last = read+1, lost+n.Lagged, n.Seq
	}
	if lost == 0 || read+lost != total {
		t.Fatalf("read %d and lost %d of %d", read, lost, total)
	}
	t.Logf("a watcher that did not read got %d of %d, told it lost %d", read, total, lost)
}

// TestWatchStreamCountsAGap: a gap in the numbers Herald did not count is
// counted by the reader, so Lagged always says what was lost.
func TestWatchStreamCountsAGap(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	w := &WatchStream{ctx: context.Background(), c: b, stop: func() bool { return true }}
	w.sc = newScanner(b)
	go func() {
		enc := json.NewEncoder(a)
		for _, seq := range []uint64{1, 2, 5} {
			enc.Encode(ControlResponse{Notify: &Notify{Seq: seq, Changed: true}})
		}
		a.Close()
	}()
	ctx := context.Background()
	var lagged []int
	for range 3 {
		lagged = append(lagged, nextOf(t, ctx, w).Lagged)
	}
	if fmt.Sprint(lagged) != "[0 0 2]" {
		t.Fatalf("lagged %v, want [0 0 2]", lagged)
	}
	if _, err := w.Next(ctx); !errors.Is(err, ErrWatchEnded) {
		t.Fatalf("after the end: %v", err)
	}
}

// TestNotifyJSONCarriesEveryField: every field of Notify crosses the
// control socket; one added later fails here until MarshalJSON carries it
// (as tailscale's TestIsNotableNotify walks ipn.Notify).
func TestNotifyJSONCarriesEveryField(t *testing.T) {
	t.Parallel()
	tool := ev(wire.ToolStart, "s1", map[string]any{"name": "terminal", "context": "Running ls"})
	full := map[string]Notify{
		"Seq":      {Seq: 7},
		"View":     {View: &View{Limits: []string{"too many"}}},
		"Event":    {Event: &tool},
		"Name":     {Event: &tool, Name: "Fix the build"},
		"Approval": {Approval: &approval.Change{Kind: approval.ChangeArrived, Request: approval.Request{Key: "k", Command: "ls"}}},
		"Notice":   {Notice: &SessionNotice{Kind: NoticeFound, Gateway: "gw", Text: "found"}},
		"Problem":  {Problem: &Problem{Source: "gw", Err: errors.New("refused")}},
		"Status":   {Status: &source.Status{Gateway: "gw", State: source.StateConnected}},
		"Window":   {Window: &WindowEvent{Name: "herald:show", Data: json.RawMessage(`"k1"`)}},
		"Changed":  {Changed: true},
		"Lagged":   {Lagged: 3},
	}
	typ := reflect.TypeFor[Notify]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		n, ok := full[name]
		if !ok {
			t.Errorf("Notify.%s is new: add it to this test and to Notify's MarshalJSON", name)
			continue
		}
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		var back Notify
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if reflect.ValueOf(back).Field(i).IsZero() {
			t.Errorf("Notify.%s did not cross: %s", name, b)
		}
	}
	b, _ := json.Marshal(full["Event"])
	var back Notify
	json.Unmarshal(b, &back)
	if d, ok := back.Event.Data.(*wire.ToolStartPayload); !ok || d.Name != "terminal" {
		t.Errorf("an event's payload crossed as %#v", back.Event.Data)
	}
	b, _ = json.Marshal(full["Problem"])
	json.Unmarshal(b, &back)
	if back.Problem.Err.Error() != "refused" {
		t.Errorf("a problem crossed as %v", back.Problem.Err)
	}
}

// BenchmarkPublishToStalledSocketWatcher is what one notification costs
// the inbox's goroutine when a watcher over the control socket never
// reads (compare BenchmarkPublishToSlowSubscriber): its writer blocks on
// the socket, its queue only lags.
func BenchmarkPublishToStalledSocketWatcher(b *testing.B) {
	s := New(Config{})
	defer s.Close()
	path := filepath.Join(b.TempDir(), "herald", "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.ServeControl(ctx, path); err != nil {
		b.Fatal(err)
	}
	w, err := WatchControl(ctx, path, WatchAll, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ev := &wire.Event{Kind: wire.MessageDelta, Payload: json.RawMessage(`{"text":"` + strings.Repeat("x", 200) + `"}`)}
	for b.Loop() {
		s.bus.publish(WatchEvents, Notify{Event: ev})
	}
}

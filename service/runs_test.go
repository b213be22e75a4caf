package service

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiservertest"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

const guard = 20 * time.Second

// bcast is closed and renewed at every service change.
type bcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBcast() *bcast { return &bcast{ch: make(chan struct{})} }

func (b *bcast) poke() {
	b.mu.Lock()
	close(b.ch)
	b.ch = make(chan struct{})
	b.mu.Unlock()
}

func (b *bcast) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// runHarness is a service on a fake clock (the channels themselves run on
// real time, so only StopRun's confirmation wait is on the fake clock).
type runHarness struct {
	svc *Service
	clk *clock.Fake
	ch  *bcast
}

func newRunHarness(t *testing.T) *runHarness {
	t.Helper()
	h := &runHarness{clk: clock.NewFake(time.Unix(1000, 0)), ch: newBcast()}
	h.svc = New(Config{Clock: h.clk})
	onChange(h.svc, h.ch.poke)
	t.Cleanup(h.svc.Close)
	return h
}

func (h *runHarness) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, guard, what, h.ch.changed, cond)
}

func (h *runHarness) addGateway(t *testing.T, srv *hermestest.Server) *gateway.Client {
	t.Helper()
	c, err := addGateway(h.svc, gateway.Config{Name: "gw", URL: srv.URL, Token: srv.Token(), Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	h.until(t, "gateway connected", func() bool {
		for _, g := range h.svc.View().Gateways {
			if g.Gateway == "gw" && g.State == source.StateConnected {
				return true
			}
		}
		return false
	})
	return c
}

func (h *runHarness) running(id string) bool {
	for _, r := range h.svc.ActiveRuns() {
		if r.ID == id {
			return true
		}
	}
	return false
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// TestStopRunInterruptsAWebSocketTurn: a turn started with Ask (a stream
// that holds, or one waiting on an approval) is interrupted by StopRun,
// which reports only after the gateway's message.complete said the turn
// ended; the approval is withdrawn.
func TestStopRunInterruptsAWebSocketTurn(t *testing.T) {
	t.Parallel()
	for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
		for _, prompt := range []string{"hold", "approve-me: rm -rf ./build"} {
			t.Run(d.String()+"/"+prompt, func(t *testing.T) {
				t.Parallel()
				srv := hermestest.NewServer(hermestest.Options{Dialect: d})
				defer srv.Close()
				h := newRunHarness(t)
				c := h.addGateway(t, srv)
				ctx := tctx(t)
				ref, err := c.CreateSession(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				ask, err := h.svc.Ask(ctx, AskRequest{Session: ref.ID, Text: prompt})
				if err != nil || ask.Session != ref.ID || ask.Status != "streaming" || ask.NewSession {
					t.Fatalf("Ask = %+v, %v", ask, err)
				}
				h.until(t, "the turn running", func() bool {
					return h.running(ref.ID) && (prompt == "hold" || len(h.svc.Inbox().Pending()) == 1)
				})
				res, err := h.svc.StopRun(ctx, "", ref.ID[:5])
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome != OutcomeInterrupted || res.Gateway != "gw" || res.ID != ref.ID || res.Transport != TransportWS ||
					!strings.Contains(res.Message, "confirmed by the gateway") {
					t.Fatalf("StopRun = %+v", res)
				}
				if srv.Interrupts() != 1 {
					t.Fatalf("gateway saw %d interrupts", srv.Interrupts())
				}
				// The view already shows the end: the result came after
				// the gateway's message.complete.
				if h.running(ref.ID) {
					t.Fatal("StopRun returned while the view still shows the turn running")
				}
				h.until(t, "the approval withdrawn", func() bool { return len(h.svc.Inbox().Pending()) == 0 })
				// Stopping the idle session asks the gateway and says so.
				res, err = h.svc.StopRun(ctx, "gw", ref.StoredID)
				if err != nil || res.Outcome != OutcomeNotRunning || res.ID != ref.ID {
					t.Fatalf("second StopRun = %+v, %v", res, err)
				}
			})
		}
	}
}

// TestStopRunConfirmsThroughSessionStatus: on a single-consumer gateway
// the turn's events go to the client that owns the session, so Herald
// never sees message.complete; after ConfirmWait it asks session.status.
func TestStopRunConfirmsThroughSessionStatus(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer srv.Close()
	h := newRunHarness(t)
	h.addGateway(t, srv)
	live, _ := srv.CreateSession()
	if err := srv.Prompt(live, "hold"); err != nil { // another client's turn
		t.Fatal(err)
	}
	type out struct {
		r   StopResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := h.svc.StopRun(tctx(t), "gw", live)
		done <- out{r, err}
	}()
	h.clk.BlockUntil(2) // StopRun waits for the turn end, polling
	select {
	case o := <-done:
		t.Fatalf("StopRun returned before the gateway was asked: %+v", o)
	default:
	}
	// The interrupt reached the gateway and the turn ended there (its
	// events went nowhere); the next poll of session.status confirms it.
	testwait.Until(t, guard, "the turn ended on the gateway", srv.Changed, func() bool {
		ss := srv.Sessions()
		return srv.Interrupts() == 1 && len(ss) == 1 && !ss[0].Running
	})
	h.clk.Advance(PollEvery)
	o := <-done
	if o.err != nil || o.r.Outcome != OutcomeInterrupted || !strings.Contains(o.r.Message, "session.status") {
		t.Fatalf("StopRun = %+v, %v", o.r, o.err)
	}
	if srv.Interrupts() != 1 {
		t.Fatalf("gateway saw %d interrupts", srv.Interrupts())
	}
}

// TestStopRunFailuresSayWhatToDo covers what a user can get wrong.
func TestStopRunFailuresSayWhatToDo(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := newRunHarness(t)
	h.addGateway(t, srv)
	ctx := tctx(t)
	for _, tc := range []struct{ gw, id, want string }{
		{"", "", "no run given"},
		{"", "nope", "no active run matches"},
		{"other", "x", `no gateway or API server named "other"`},
		{"gw", "nosuchsession", "has no session nosuchsession"},
	} {
		_, err := h.svc.StopRun(ctx, tc.gw, tc.id)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("StopRun(%q, %q) error %v, want %q", tc.gw, tc.id, err, tc.want)
		}
	}
	srv.Close() // the gateway goes away: nothing can be sent
	h.until(t, "gateway down", func() bool {
		for _, g := range h.svc.View().Gateways {
			if g.State != source.StateConnected {
				return true
			}
		}
		return false
	})
	if _, err := h.svc.StopRun(ctx, "gw", "abc"); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("StopRun while disconnected: %v", err)
	}
}

// TestStopRunStopsAnAPIServerRun: POST /v1/runs/{id}/stop, confirmed by
// run.cancelled on the run's stream, in both stream dialects.
func TestStopRunStopsAnAPIServerRun(t *testing.T) {
	t.Parallel()
	for _, d := range []apiservertest.Dialect{apiservertest.SingleConsumer, apiservertest.LastEventID} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			// The fake's agent paces on its own fake clock, never
			// advanced: the run holds after its first tick until stopped.
			api := apiservertest.NewServer(apiservertest.Options{Dialect: d, Clock: clock.NewFake(time.Unix(0, 0)), StepDelay: time.Second})
			defer api.Close()
			h := newRunHarness(t)
			if _, err := h.svc.AddSource(SourceConfig{Kind: KindAPIServer, Config: source.Config{Name: "api", URL: api.URL, Secrets: map[string]string{"key": api.Key()}, Clock: clock.Real{}}}); err != nil {
				t.Fatal(err)
			}
			ctx := tctx(t)
			ask, err := h.svc.Ask(ctx, AskRequest{Text: "slow 5"})
			if err != nil || ask.Transport != TransportAPI || ask.Session == "" {
				t.Fatalf("Ask = %+v, %v", ask, err)
			}
			// A new run is named by its first prompt, as every surface
			// names it (herald ask says it so).
			if ask.Name != "slow 5" || ask.Name != h.svc.SessionName(ask.Gateway, ask.Session, "") {
				t.Errorf("Ask named the run %q", ask.Name)
			}
			h.until(t, "the run running", func() bool { return h.running(ask.Session) })
			res, err := h.svc.StopRun(ctx, "", ask.Session)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != OutcomeCancelled || res.Transport != TransportAPI || !strings.Contains(res.Message, "confirmed by the API server") {
				t.Fatalf("StopRun = %+v", res)
			}
			if ri, ok := api.Run(ask.Session); !ok || ri.Status != "cancelled" {
				t.Fatalf("the API server has the run as %+v", ri)
			}
			if h.running(ask.Session) {
				t.Fatal("StopRun returned while the view still shows the run running")
			}
		})
	}
}

func TestControlSocketRunsStopAndAsk(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := newRunHarness(t)
	h.addGateway(t, srv)
	ctx := tctx(t)
	r := h.svc.handleControl(ctx, ControlRequest{Op: "ask", Text: "hold"})
	if r.Error != "" || r.Ask == nil || !r.Ask.NewSession {
		t.Fatalf("ask: %+v", r)
	}
	id := r.Ask.Session
	h.until(t, "running", func() bool { return h.running(id) })
	r = h.svc.handleControl(ctx, ControlRequest{Op: "runs"})
	if len(r.Runs) != 1 || r.Runs[0].ID != id || r.Runs[0].Transport != TransportWS {
		t.Fatalf("runs: %+v", r)
	}
	r = h.svc.handleControl(ctx, ControlRequest{Op: "stop", Key: "gw/" + id})
	if r.Error != "" || r.Stop == nil || r.Stop.Outcome != OutcomeInterrupted {
		t.Fatalf("stop: %+v", r)
	}
	r = h.svc.handleControl(ctx, ControlRequest{Op: "ask", Text: "  "})
	if !strings.Contains(r.Error, "empty") {
		t.Fatalf("empty ask: %+v", r)
	}
}

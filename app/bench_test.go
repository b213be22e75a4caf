package app

import (
	"context"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/zalando/go-keyring"
)

// benchTray is a Tray that reports each model it is given (the ones
// nobody waits for are dropped once its buffer is full, as a real tray
// never blocks the app).
type benchTray struct {
	updates chan TrayModel
}

func (b *benchTray) Update(m TrayModel) {
	select {
	case b.updates <- m:
	default:
	}
}
func (b *benchTray) Stop() {}

// benchDesktop is the app against the fake gateway with a tray that
// reports its updates and a platform that reports notifications.
func benchDesktop(b *testing.B) (*App, *fakePlatform, *benchTray, *hermestest.Server, string) {
	b.Helper()
	keyring.MockInit()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	b.Cleanup(srv.Close)
	live, stored := srv.CreateSession()
	settings, _ := NewSettingsStore(b.TempDir())
	st := DefaultSettings()
	st.Gateways = []GatewaySettings{{Name: "lab", URL: srv.URL, Kind: "ws", Auth: "token", Sessions: []string{stored}}}
	if err := settings.Save(st); err != nil {
		b.Fatal(err)
	}
	secrets := NewSecrets(OSKeyring{})
	if err := secrets.Set("lab", "token", srv.Token()); err != nil {
		b.Fatal(err)
	}
	tray := &benchTray{updates: make(chan TrayModel, 1024)}
	a := New(Deps{Version: "bench", Settings: settings, Secrets: secrets, Store: approval.NewMemoryStore(), Autostart: Autostart{Dir: b.TempDir()},
		NewTray: func(TrayActions) (Tray, error) { return tray, nil }})
	b.Cleanup(a.Close)
	p := newFakePlatform()
	a.Attach(p)
	a.startTray()
	if err := a.Start(); err != nil {
		b.Fatal(err)
	}
	deadline := time.After(guard)
	for attached := false; !attached; {
		ch := srv.Changed()
		for _, s := range srv.Sessions() {
			attached = attached || s.ID == live && s.Attached
		}
		if attached {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			b.Fatal("the app never attached to the session")
		}
	}
	return a, p, tray, srv, live
}

// waitTray waits for a tray update for which ok holds.
func (t *benchTray) wait(b *testing.B, what string, ok func(TrayModel) bool) time.Time {
	deadline := time.After(guard)
	for {
		select {
		case m := <-t.updates:
			if ok(m) {
				return time.Now()
			}
		case <-deadline:
			b.Fatalf("no tray update with %s", what)
		}
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}

// BenchmarkEventToTray: a gateway event that changes what the tray says
// (a turn starts, then ends) crosses a real loopback WebSocket, the
// client, the service and the app, and reaches the tray's Update with the
// new state. Two samples per iteration; p50/p99/max.
//
//   - spaced: events now and then (the tray's pump idle, its burst
//     ready): the path itself;
//   - stream: each event as soon as the last one showed, a sustained
//     stream that drains the pump's burst: then its gap (trayGap) bounds
//     the rate, and the latency.
func BenchmarkEventToTray(b *testing.B) {
	for _, spaced := range []bool{true, false} {
		b.Run(map[bool]string{true: "spaced", false: "stream"}[spaced], func(b *testing.B) {
			a, _, tray, srv, live := benchDesktop(b)
			var lat []time.Duration
			step := func(kind string, payload map[string]any, what string, ok func(TrayModel) bool) {
				if spaced {
					// An event now and then: the pump idle and its
					// burst back, as after pumpBurst*trayGap of quiet.
					b.StopTimer()
					for {
						p := a.trayPump
						p.mu.Lock()
						busy := p.busy
						if !busy {
							p.tokens, p.filled = p.burst, p.clk.Now()
						}
						p.mu.Unlock()
						if !busy {
							break
						}
						runtime.Gosched()
					}
					b.StartTimer()
				}
				start := time.Now()
				if err := srv.Emit(live, kind, payload); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, tray.wait(b, what, ok).Sub(start))
			}
			for b.Loop() {
				step("message.start", map[string]any{}, "the run", func(m TrayModel) bool { return m.State == TrayRunning && len(m.Runs) == 1 })
				step("message.complete", map[string]any{"status": "complete", "text": "done"}, "idle", func(m TrayModel) bool { return m.State == TrayConnected && len(m.Runs) == 0 })
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkEventToNotification: an approval the gateway asks reaches the
// platform's Notify through the app's whole path (service, notifier, the
// desk's policy), critical; it is then denied from the window, so one
// waits at a time.
func BenchmarkEventToNotification(b *testing.B) {
	a, p, _, srv, live := benchDesktop(b)
	var lat []time.Duration
	seen := 0
	for b.Loop() {
		start := time.Now()
		if _, _, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./x"}); err != nil {
			b.Fatal(err)
		}
		var n Notification
		p.waitFor(b, "the approval's notification", func(f *fakePlatform) bool {
			for _, x := range f.notified[seen:] {
				if x.Urgency == UrgencyCritical {
					n = x
					return true
				}
			}
			return false
		})
		lat = append(lat, time.Since(start))
		p.mu.Lock()
		seen = len(p.notified)
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		if err := a.svc.Answer(ctx, n.ID, approval.ChoiceDeny, "window", false); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
	reportPercentiles(b, lat)
}

package gateway

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/source"
)

// BenchmarkRealGatewayRestart restarts the REAL Hermes dashboard gateway
// (hermes-peer 0.19.0) again and again, each time 12 s after Herald
// reconnected (so two or three restarts within a minute), and reports the
// time from the gateway printing READY (accepting again) to Herald being
// connected, on the real clock with the default backoff. Goal: under 1 s
// every time. Run it with
//
//	go test -run XXX -bench RealGatewayRestart -benchtime 5x ./backend/gateway/
func BenchmarkRealGatewayRestart(b *testing.B) {
	p := hermespeer.Start(b, hermespeer.WS, "0.19.0")
	var mu sync.Mutex
	connected := make(chan time.Time, 16)
	c, err := New(Config{Name: "real", URL: p.Base, Token: p.Secret, OnStatus: func(s source.Status) {
		if s.State == source.StateConnected {
			mu.Lock()
			defer mu.Unlock()
			select {
			case connected <- time.Now():
			default:
			}
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	wait := func() time.Time {
		select {
		case at := <-connected:
			return at
		case <-time.After(60 * time.Second):
			b.Fatal("not connected within 60 s")
			return time.Time{}
		}
	}
	wait()
	var lags []time.Duration
	for b.Loop() {
		time.Sleep(12 * time.Second) // the scenario: up 12 s, then restarted
		for len(connected) > 0 {
			<-connected
		}
		p.Restart(b) // returns once the new server prints READY
		ready := time.Now()
		lags = append(lags, max(wait().Sub(ready), 0))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lags[len(lags)/2]), "p50-ready-to-connected-ms")
	b.ReportMetric(ms(lags[len(lags)-1]), "max-ready-to-connected-ms")
}

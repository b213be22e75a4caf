package service

import (
	"sort"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// BenchmarkApprovalToNotifier measures what a user waits for: the fake
// gateway writes an approval server request, it crosses a real loopback
// WebSocket, the client decodes it, the inbox takes it and hands it to the
// notifications subscriber (WatchApprovals). Reports p50/p99/p999.
func BenchmarkApprovalToNotifier(b *testing.B) {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	live, stored := srv.CreateSession()
	arrived := make(chan time.Time, 1)
	s := New(Config{})
	dispatch(s, WatchApprovals, func(n Notify) {
		if n.Approval.Kind == approval.ChangeArrived {
			arrived <- time.Now()
		}
	})
	defer s.Close()
	c, err := addGateway(s, gateway.Config{Name: "gw", URL: srv.URL, Token: srv.Token()})
	if err != nil {
		b.Fatal(err)
	}
	testwait.Until(b, 20*time.Second, "connected", srv.Changed, func() bool { return c.Status().State == source.StateConnected })
	if _, err := c.AttachSession(b.Context(), stored); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, _, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./x"}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-arrived).Sub(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(pct(0.999), "p999-µs")
}

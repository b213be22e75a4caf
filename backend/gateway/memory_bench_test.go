package gateway

import (
	"runtime"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

const (
	memGateways = 10
	memSessions = 64
)

// liveBytes is heap in use plus goroutine stacks, after a full GC.
func liveBytes() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// BenchmarkMemoryPerGatewaySession connects 10 clients to 10 fake gateways
// and has each follow 64 sessions, reporting the live memory (heap +
// goroutine stacks, after GC) a connected gateway and a followed session
// add. The gateways and their sessions exist before the first measurement,
// so their own cost is excluded; the gateway side of each connection (its
// WebSocket buffers and goroutines) is not, so the figures are an upper
// bound for Herald alone.
func BenchmarkMemoryPerGatewaySession(b *testing.B) {
	var perGW, perSess float64
	for b.Loop() {
		srvs := make([]*hermestest.Server, memGateways)
		stored := make([][]string, memGateways)
		for i := range srvs {
			srvs[i] = hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
			for j := 0; j < memSessions; j++ {
				_, st := srvs[i].CreateSession()
				stored[i] = append(stored[i], st)
			}
		}
		m0 := liveBytes()
		hs := make([]*harness, memGateways)
		for i, srv := range srvs {
			hs[i] = start(b, srv, nil)
			hs[i].rec.waitState(b, source.StateConnected)
		}
		m1 := liveBytes()
		for i, h := range hs {
			for _, st := range stored[i] {
				if _, err := h.client.AttachSession(ctxT(b), st); err != nil {
					b.Fatal(err)
				}
			}
			if n := len(h.client.Sessions()); n != memSessions {
				b.Fatalf("client follows %d sessions, want %d", n, memSessions)
			}
		}
		m2 := liveBytes()
		perGW += (float64(m1) - float64(m0)) / memGateways
		perSess += (float64(m2) - float64(m1)) / (memGateways * memSessions)
		runtime.KeepAlive(hs)
		for i, h := range hs {
			h.stop()
			srvs[i].Close()
		}
	}
	b.ReportMetric(perGW/float64(b.N), "B/gateway")
	b.ReportMetric(perSess/float64(b.N), "B/session")
}

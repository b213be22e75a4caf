package gateway

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Frames as a real Hermes gateway sends them (see testdata captures).
var benchFrames = map[string][]byte{
	"delta":         []byte(`{"jsonrpc": "2.0", "method": "event", "params": {"type": "message.delta", "session_id": "7f57f239", "payload": {"text": "will "}, "seq": 42}}`),
	"tool.complete": []byte(`{"jsonrpc": "2.0", "method": "event", "params": {"type": "tool.complete", "session_id": "7f57f239", "payload": {"tool_id": "call_e3d9dca5c892", "name": "terminal", "args": {"command": "git reset --hard HEAD"}, "duration_s": 0.32448625564575195, "result": {"output": "[stub] would have run: git reset --hard HEAD", "exit_code": 0}}, "seq": 43}}`),
	"approval":      []byte(`{"jsonrpc":"2.0","id":"srq-3f9a1c2b7d4e","method":"approval","params":{"session_id":"7f57f239","command":"git reset --hard HEAD","description":"git reset --hard (destroys uncommitted changes)","pattern_key":"git reset --hard (destroys uncommitted changes)","pattern_keys":["git reset --hard (destroys uncommitted changes)"],"allow_permanent":true,"request_id":"7c1e","choices":["once","session","always","deny"]}}`),
}

// BenchmarkDecodeDispatch measures one frame from bytes to a delivered,
// typed, de-duplicated event (decode + routing + ordering queue).
func BenchmarkDecodeDispatch(b *testing.B) {
	for _, name := range []string{"delta", "tool.complete", "approval"} {
		b.Run(name, func(b *testing.B) {
			c, err := New(Config{URL: "http://127.0.0.1:9119"})
			if err != nil {
				b.Fatal(err)
			}
			c.track("7f57f239", "20261202_100136_258fb5")
			frame := benchFrames[name]
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for i := 0; b.Loop(); i++ {
				f, err := wire.DecodeFrame(frame)
				if err != nil {
					b.Fatal(err)
				}
				if name == "approval" {
					// Distinct ids, or the client would (rightly) drop repeats.
					f.ID = []byte(`"srq-` + strconv.Itoa(i) + `"`)
					c.handleServerRequest(nil, f, c.clk.Now())
				} else {
					c.mu.Lock()
					c.sessions["7f57f239"].watermark = 0 // same seq every time
					c.mu.Unlock()
					c.handleFrame(nil, f)
				}
				if _, ok := c.out.Pop(); !ok {
					b.Fatal("nothing delivered")
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkLoopbackLatency measures gateway-send -> event-delivered over a
// real loopback WebSocket, reporting percentiles.
func BenchmarkLoopbackLatency(b *testing.B) {
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	got := make(chan time.Time, 1)
	connected := make(chan struct{}, 1)
	c, err := New(Config{
		URL:   srv.URL,
		Token: srv.Token(),
		OnEvent: func(ev wire.Event) {
			if ev.Kind == wire.MessageDelta {
				got <- time.Now()
			}
		},
		OnStatus: func(s source.Status) {
			if s.State == source.StateConnected {
				select {
				case connected <- struct{}{}:
				default:
				}
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	<-connected
	ref, err := c.CreateSession(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := srv.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "x"}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(pct(0.999), "p999-µs")
}

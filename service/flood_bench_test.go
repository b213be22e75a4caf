package service

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
)

// floodEnded is how many ended requests the flood benchmarks keep in the
// inbox: 5 gateways at the inbox's per-gateway cap of ended requests.
const floodEnded = 5 * approval.DefaultMaxEnded

// srqEvent is an approval server request as the gateway client delivers it.
func srqEvent(gw, id, cmd string) wire.Event {
	p, _ := json.Marshal(map[string]any{"session_id": "s1", "command": cmd, "description": "recursive delete", "choices": []string{"once", "session", "always", "deny"}})
	ev := wire.Event{Gateway: gw, Session: "s1", Kind: wire.ApprovalServerRequest, RequestID: id, Payload: p, ReceivedAt: time.Now()}
	ev.DecodeData()
	return ev
}

func cancelEvent(gw, id string) wire.Event {
	p, _ := json.Marshal(wire.CancelPayload{ID: id, Reason: "timeout"})
	ev := wire.Event{Gateway: gw, Session: "s1", Kind: wire.RequestCancel, RequestID: id, Payload: p, ReceivedAt: time.Now()}
	ev.DecodeData()
	return ev
}

// floodedService is a service whose inbox holds floodEnded ended requests,
// with a WatchApprovals subscriber reporting arrivals on the returned channel.
func floodedService(b *testing.B) (*Service, chan time.Time) {
	b.Helper()
	arrived := make(chan time.Time, 1)
	s := New(Config{})
	for i := range floodEnded {
		gw := fmt.Sprintf("gw%d", i%5)
		id := fmt.Sprintf("srq-old-%d", i)
		s.onEvent(srqEvent(gw, id, fmt.Sprintf("rm -rf ./build-%d", i)))
		s.onEvent(cancelEvent(gw, id))
	}
	dispatch(s, WatchApprovals, func(n Notify) {
		if n.Approval.Kind == approval.ChangeArrived {
			arrived <- time.Now()
		}
	})
	if n := len(s.View().Recent); n != floodEnded {
		b.Fatalf("%d ended requests in the inbox, want %d", n, floodEnded)
	}
	return s, arrived
}

// BenchmarkApprovalUnderFlood measures what a user waits for when the
// inbox already holds 10,000 ended requests and a window keeps rebuilding
// its view: a new approval from the gateway client's delivery (onEvent)
// through the inbox to the notifications subscriber (WatchApprovals). Reports
// p50/p99/max in µs; the budget is 100 ms.
func BenchmarkApprovalUnderFlood(b *testing.B) {
	s, arrived := floodedService(b)
	defer s.Close()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the window's batched view builds, back to back
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				s.View()
			}
		}
	}()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("srq-new-%d", i)
		i++
		start := time.Now()
		s.onEvent(srqEvent("gw-live", id, "rm -rf ./x"))
		lat = append(lat, (<-arrived).Sub(start))
		b.StopTimer()
		s.onEvent(cancelEvent("gw-live", id)) // keep the live count flat
		b.StartTimer()
	}
	close(stop)
	<-done
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	if lat[len(lat)-1] > 100*time.Millisecond {
		b.Logf("over budget: the slowest approval took %v to reach the notifier", lat[len(lat)-1])
	}
}

// BenchmarkViewWith10kEnded is the cost of one view build (what every
// window push and `herald` control request pays) with 10,000 ended
// requests in the inbox.
func BenchmarkViewWith10kEnded(b *testing.B) {
	s, _ := floodedService(b)
	defer s.Close()
	for b.Loop() {
		s.View()
	}
}

package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/wire"
)

// BenchmarkSessionTurnApprovalBehindDeltas: a turn sent to a stored
// session streams 5000 deltas (~1 KiB each) and then asks for an
// approval, while the consumer is stuck on the first delta (a busy
// window): once it is free again, the approval reaches it ahead of the
// streamed text queued before it (the client's two-lane queue), so the
// user's next approval stays fast under a flood. Reported: ns/op is the
// whole turn, read-ms the time to read the flood and the approval,
// approval-us the time from the consumer's release to the approval's
// delivery, deltas-before the deltas delivered ahead of it (the one the
// consumer was stuck on).
func BenchmarkSessionTurnApprovalBehindDeltas(b *testing.B) {
	const deltas = 5000
	delta := strings.Repeat("x", 1000)
	var turns atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/health":
			fmt.Fprint(w, `{"status":"ok","platform":"hermes-agent"}`)
		case strings.HasSuffix(r.URL.Path, "/chat/stream"):
			w.Header().Set("Content-Type", "text/event-stream")
			run := fmt.Sprintf("run_%d", turns.Add(1))
			frame := func(name, data string) {
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, strings.Replace(data, "}", `,"session_id":"s1","run_id":"`+run+`"}`, 1))
			}
			frame("run.started", `{"seq":1}`)
			for i := range deltas {
				frame("assistant.delta", fmt.Sprintf(`{"delta":%q,"seq":%d}`, delta, i+2))
			}
			frame("approval.request", `{"command":"rm -rf ./build","request_id":"q1","message_id":"m","choices":["once","deny"]}`)
			frame("run.completed", `{"completed":true}`)
			frame("done", `{"end":true}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var before, seen atomic.Int64
	approved := make(chan struct{}, 1)
	ended := make(chan struct{}, 1)
	queued := make(chan struct{}, 1) // the client has read the approval
	var release chan struct{}
	var stuck atomic.Bool
	c, err := apiserver.New(apiserver.Config{URL: srv.URL, Key: "k", OnEvent: func(ev wire.Event) {
		switch {
		case ev.Kind == wire.MessageDelta:
			if seen.Add(1) == 1 && stuck.Load() {
				<-release
			}
		case ev.Kind == wire.ApprovalRequest:
			before.Store(seen.Load())
			approved <- struct{}{}
		case wire.IsRunEnd(ev.Kind):
			ended <- struct{}{}
		}
	}, OnStatus: func(st apiserver.Status) {
		for _, ri := range st.Runs {
			if ri.PendingApprovals > 0 && ri.Mode == apiserver.ModeSessionStream {
				select {
				case queued <- struct{}{}:
				default:
				}
			}
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	var read, jump time.Duration
	var deltasBefore int64
	b.ResetTimer()
	for range b.N {
		seen.Store(0)
		release = make(chan struct{})
		stuck.Store(true)
		start := time.Now()
		if _, err := c.ChatSession(ctx, "s1", "go"); err != nil {
			b.Fatal(err)
		}
		<-queued
		read += time.Since(start)
		freed := time.Now()
		close(release)
		<-approved
		jump += time.Since(freed)
		deltasBefore += before.Load()
		<-ended
		for len(queued) > 0 {
			<-queued
		}
	}
	b.ReportMetric(float64(read.Milliseconds())/float64(b.N), "read-ms")
	b.ReportMetric(float64(jump.Microseconds())/float64(b.N), "approval-us")
	b.ReportMetric(float64(deltasBefore)/float64(b.N), "deltas-before")
}

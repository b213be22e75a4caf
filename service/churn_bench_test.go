package service

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// The churning bridge of issue 29: a route that answers every poll at
// once with churnItems new approvals of churnBytes (the previous poll's
// gone), for churnPolls polls, a second apart on the clock: one minute.
const (
	churnItems = 128
	churnBytes = 30 << 10
	churnPolls = 60
)

// churnRoute is that route. It streams each reply from constant pieces
// (the command is one shared buffer), so the route itself holds and
// allocates next to nothing: the figures are Herald's.
type churnRoute struct {
	cmd []byte

	mu     sync.Mutex
	polls  int
	served chan struct{} // closed and replaced at every poll
}

func newChurnRoute() *churnRoute {
	cmd := "rm -rf ./build-cache && "
	cmd = strings.Repeat(cmd, churnBytes/len(cmd)+1)[:churnBytes]
	return &churnRoute{cmd: []byte(cmd), served: make(chan struct{})}
}

func (c *churnRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Hermes-Session-Token") != "tok" || !strings.HasSuffix(r.URL.Path, "/v1/poll") {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.polls++
	k := strconv.Itoa(c.polls)
	head := `{"protocol": 1, "instance": "churn", "watchers": 1, "recent": [], "cursor": ` + k + `, "items": [`
	item := func(i int) (string, string) {
		return `{"kind": "approval", "id": "c` + k + "-" + strconv.Itoa(i) + `", "digest": "d", "command": "`,
			`", "allowed_choices": ["once", "deny"], "origin": {"surface": "cli", "session_key": "churn-` + strconv.Itoa(i%8) + `"}}`
	}
	n := len(head) + len(`]}`) + churnItems - 1
	for i := range churnItems {
		a, z := item(i)
		n += len(a) + len(c.cmd) + len(z)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n)) // as the plugin's JSONResponse
	io.WriteString(w, head)
	for i := range churnItems {
		if i > 0 {
			io.WriteString(w, ",")
		}
		a, z := item(i)
		io.WriteString(w, a)
		w.Write(c.cmd)
		io.WriteString(w, z)
	}
	io.WriteString(w, `]}`)
	close(c.served)
	c.served = make(chan struct{})
}

func (c *churnRoute) count() (int, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.polls, c.served
}

// BenchmarkChurningBridge: a Herald bridge route answers every poll at
// once with 128 new approvals of 30 KB each (the previous ones gone), for
// a minute on the clock, into the inbox and an on-disk audit log. One
// iteration is that minute. Reports the peak Go heap (sampled every 2 ms)
// and peak RSS (VmHWM) in MiB (budget: the README's flood figure, under
// 50 MiB), the polls the client made in the minute (MinPollInterval paces
// a route that answers at once), how many approvals were shown (taken
// in) and refused, and whether the source was shown as flooding (1).
// The route runs in the same process: its replies count in the figures.
func BenchmarkChurningBridge(b *testing.B) {
	var peakHeap, peakRSS uint64
	var polls, shown, refused, flooding float64
	for b.Loop() {
		store, err := approval.OpenStore(filepath.Join(b.TempDir(), "audit.db"), approval.StoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		route := newChurnRoute()
		srv := httptest.NewServer(route)
		clk := clock.NewFake(time.Unix(1_700_000_000, 0))
		s := New(Config{Store: store, Clock: clk})
		runtime.GC()
		resetPeakRSS()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		stop, sampled := make(chan struct{}), make(chan uint64)
		go func() {
			var peak uint64
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				metrics.Read(sample)
				peak = max(peak, sample[0].Value.Uint64())
				select {
				case <-stop:
					sampled <- peak
					return
				case <-t.C:
				}
			}
		}()
		if _, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "churn", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}}); err != nil {
			b.Fatal(err)
		}
		// A second on the clock per poll served, for a minute.
		flooding = 0 // sampled half way (Flood.Active)
		for k := 1; k <= churnPolls; k++ {
			testwait.Until(b, time.Minute, "poll "+strconv.Itoa(k), func() <-chan struct{} { _, ch := route.count(); return ch },
				func() bool { n, _ := route.count(); return n >= k })
			if k == churnPolls/2 {
				flooding = 0
				for _, f := range s.Inbox().Snapshot().Floods {
					if f.Gateway == "churn" && f.Active {
						flooding = 1
					}
				}
			}
			clk.Advance(time.Second)
		}
		n, _ := route.count()
		s.Remove("churn") // the source stops: what it delivered is in
		srv.Close()
		close(stop)
		peakHeap = max(peakHeap, <-sampled)
		peakRSS = max(peakRSS, readPeakRSS())
		snap := s.Inbox().Snapshot()
		var taken int
		for _, r := range snap.Requests {
			if r.Gateway == "churn" {
				taken++
			}
		}
		polls, shown, refused = float64(n), float64(taken), 0
		for _, f := range snap.Floods {
			if f.Gateway == "churn" {
				refused = float64(f.Refused)
			}
		}
		s.Close()
		store.Close()
	}
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakRSS)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(polls, "polls")
	b.ReportMetric(shown, "shown")
	b.ReportMetric(refused, "refused")
	b.ReportMetric(flooding, "flooding")
}

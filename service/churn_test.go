package service

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// TestChurningBridgeIsFlooding: a bridge route that answers every poll at
// once with 128 new 30 KB approvals (the previous ones gone) never has
// many open at once, yet it is shown as flooding once its arrivals pass
// the limit a minute (approval.DefaultMaxArrivalsPerMinute); what it
// sends past that is refused, not shown; the ended requests keep only
// the beginning of their command. (BenchmarkChurningBridge measures the
// memory over a whole minute.)
func TestChurningBridgeIsFlooding(t *testing.T) {
	t.Parallel()
	route := newChurnRoute()
	srv := httptest.NewServer(route)
	t.Cleanup(srv.Close)
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	s := New(Config{Store: approval.NewMemoryStore(), Clock: clk})
	defer s.Close()
	if _, err := s.AddSource(SourceConfig{Kind: KindBridge, Config: source.Config{Name: "churn", URL: srv.URL, Secrets: map[string]string{"token": "tok"}}}); err != nil {
		t.Fatal(err)
	}
	const polls = 3 // 384 arrivals within seconds
	for k := 1; k <= polls; k++ {
		testwait.Until(t, srcGuard, "poll "+strconv.Itoa(k), func() <-chan struct{} { _, ch := route.count(); return ch },
			func() bool { n, _ := route.count(); return n >= k })
		clk.Advance(time.Second)
	}
	ch := newChanges()
	onChange(s, ch.poke)
	var flood approval.Flood
	testwait.Until(t, srcGuard, "the flood", ch.next, func() bool {
		for _, f := range s.Inbox().Snapshot().Floods {
			if f.Gateway == "churn" {
				flood = f
			}
		}
		return flood.Refused >= polls*churnItems-approval.DefaultMaxArrivalsPerMinute
	})
	if !flood.Active || flood.PerMinute != approval.DefaultMaxArrivalsPerMinute {
		t.Fatalf("flood %+v", flood)
	}
	v := s.View()
	if len(v.Limits) == 0 || !strings.Contains(strings.Join(v.Limits, "\n"), "is flooding Herald") {
		t.Fatalf("the view does not say the source is flooding: %q", v.Limits)
	}
	taken, open := 0, 0
	for _, r := range s.Inbox().Snapshot().Requests {
		if r.Gateway != "churn" {
			continue
		}
		taken++
		if r.State.Live() {
			open++
			continue
		}
		if len(r.Command) > 1<<10 || !r.Truncated || r.CommandBytes != churnBytes {
			t.Fatalf("an ended request keeps %d bytes of its command (truncated %v, size %d)", len(r.Command), r.Truncated, r.CommandBytes)
		}
	}
	if taken > approval.DefaultMaxArrivalsPerMinute || open > churnItems {
		t.Fatalf("%d taken in (%d open), want at most %d a minute", taken, open, approval.DefaultMaxArrivalsPerMinute)
	}
}

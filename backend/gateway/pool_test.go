package gateway

import (
	"context"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestPoolKeepsGatewaysIndependent: two gateways at once, each with its own
// channel and state; one refusing Herald does not disturb the other.
func TestPoolKeepsGatewaysIndependent(t *testing.T) {
	t.Parallel()
	good := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer good.Close()
	bad := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Legacy})
	defer bad.Close()
	rec := newRecorder()
	pool := NewPool(context.Background(), rec.onEvent, rec.onStatus)
	defer pool.Close()
	if _, err := pool.Add(Config{Name: "home", URL: good.URL, Token: good.Token()}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Add(Config{Name: "lab", URL: bad.URL, Token: "WRONG"}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Add(Config{Name: "home", URL: good.URL}); err == nil {
		t.Fatal("duplicate gateway name accepted")
	}
	rec.waitFor(t, "both states", func(_ []wire.Event, sts []source.Status) bool {
		var home, lab bool
		for _, s := range sts {
			home = home || s.Gateway == "home" && s.State == source.StateConnected
			lab = lab || s.Gateway == "lab" && s.State == source.StateAuthFailed
		}
		return home && lab
	})
	c, _ := pool.Get("home")
	ref, err := c.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	good.Emit(ref.ID, wire.MessageDelta, map[string]any{"text": "hi"})
	rec.waitFor(t, "event tagged with its gateway", func(evs []wire.Event, _ []source.Status) bool {
		for _, e := range evs {
			if e.Kind == wire.MessageDelta && e.Gateway == "home" {
				return true
			}
		}
		return false
	})
	sts := pool.Statuses()
	if len(sts) != 2 || sts[0].Gateway != "home" || sts[1].Gateway != "lab" || sts[1].State != source.StateAuthFailed {
		t.Fatalf("statuses = %+v", sts)
	}
	pool.Remove("lab")
	if got := pool.Names(); len(got) != 1 || got[0] != "home" {
		t.Fatalf("names after remove = %v", got)
	}
}

package integration

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/netfault"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestAPIAnswerCutAfterWrite: on the real 0.18.2 and 0.19.0 API servers,
// an approval answer reaches the server and the link (the answer's reply
// and the run's event stream) is cut before the reply. Herald must say
// the outcome is unknown, never offer the request again, ask the run's
// status (which on these versions cannot name the approval), and settle
// it when the run ends: outcome unknown, since neither the status nor
// the end says whose answer the server took.
func TestAPIAnswerCutAfterWrite(t *testing.T) {
	t.Parallel()
	for _, v := range hermespeer.Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			peer := realAPI(t, v)
			u, _ := url.Parse(peer.URL)
			proxy, err := netfault.New(u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			direct, err := apiserver.New(apiserver.Config{Name: "direct", URL: peer.URL, Key: peer.Secret})
			if err != nil {
				t.Fatal(err)
			}

			changed := make(chan struct{}, 1)
			poke := func() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
			// The API server source as the service opens it: it is the
			// inbox's Answerer, as there.
			var api *apiserver.Source
			in := approval.New(approval.Options{Store: approval.NewMemoryStore(),
				Answerers: func(string) (approval.Answerer, bool) { return api, true },
				Notify:    func(approval.Change) { poke() }})
			defer in.Close()
			d, err := source.Lookup(string(apiserver.Kind))
			if err != nil {
				t.Fatal(err)
			}
			src, err := d.Open(source.Config{Name: "lab", URL: "http://" + proxy.Addr(), Secrets: map[string]string{"key": peer.Secret}},
				source.Hooks{OnEvent: func(ev wire.Event) {
					in.Ingest(ev)
					poke()
				}})
			if err != nil {
				t.Fatal(err)
			}
			api = src.(*apiserver.Source)
			client := api.Client()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			done := make(chan struct{})
			go func() { defer close(done); _ = client.Run(ctx) }()
			defer func() { cancel(); <-done }()
			wait := func(what string, cond func() bool) {
				t.Helper()
				for !cond() {
					select {
					case <-changed:
					case <-time.After(200 * time.Millisecond): // re-check the real server's side
					case <-ctx.Done():
						t.Fatalf("timed out waiting for %s", what)
					}
				}
			}

			run, err := client.StartRun(ctx, apiserver.RunRequest{Input: "approve-me: git reset --hard HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			var key string
			wait("the approval", func() bool {
				for _, r := range in.Pending() {
					if r.Session == run.ID && r.Command == "git reset --hard HEAD" {
						key = r.Key
						return true
					}
				}
				return false
			})

			// The answer reaches the server; its reply (and the stream) is
			// held, then the link is cut.
			proxy.HoldReplies()
			before, _ := proxy.Forwarded()
			answered := make(chan error, 1)
			go func() { answered <- in.Answer(ctx, key, "once", "tray", false) }()
			wait("the server to take the answer", func() bool {
				if n, _ := proxy.Forwarded(); n == before {
					return false
				}
				st, err := direct.GetRun(ctx, run.ID)
				return err == nil && st.Status != "waiting_for_approval"
			})
			proxy.Cut()
			proxy.ReleaseReplies()
			cut := time.Now()
			var ue *approval.UnknownOutcomeError
			if err := <-answered; !errors.As(err, &ue) {
				t.Fatalf("answer cut after the write: %v, want an unknown outcome", err)
			}
			if err := in.Answer(ctx, key, "once", "window", false); err == nil {
				t.Fatal("a second answer was accepted after the cut")
			}

			// The run ends (the stub goes on once approved); Herald learns
			// it by polling and settles the request: outcome unknown.
			var r approval.Request
			wait("the request to settle", func() bool {
				r, _ = in.Get(key)
				if r.State == approval.StatePending {
					t.Fatalf("offered again after the cut: %+v", r)
				}
				return !r.State.Live()
			})
			if r.State != approval.StateOutcomeUnknown || !strings.Contains(r.Outcome.Detail, "outcome unknown") {
				t.Fatalf("settled %s %q, want outcome unknown", r.State, r.Outcome.Detail)
			}
			st, err := direct.GetRun(ctx, run.ID)
			if err != nil || st.Status != "completed" || !strings.HasPrefix(st.Output, "approved: git reset --hard HEAD") {
				t.Fatalf("the real run: %+v %v (the server took the answer)", st, err)
			}
			t.Logf("%s: settled %s %v after the cut (the run's status then %q, last_event %q): %s", v, r.State, time.Since(cut).Round(time.Millisecond), st.Status, st.LastEvent, r.Outcome.Detail)
		})
	}
}

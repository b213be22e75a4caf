package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/hermestest"
)

// TestUnknownReconciledOnReconnect runs the inbox behind the gateway
// client against the fake 0.21.3+ gateway (server requests, open_requests,
// approval.pending, request.answer). An answer is written and the link
// drops before the gateway's reply; after the reconnect Herald asks the
// gateway what still waits:
//   - lost before the gateway took it: listed again by its id, so pending
//     again, and a second answer by that id settles it (one answer at the
//     gateway);
//   - taken, then the link dropped: no longer listed, so it stays unknown
//     with a plain reason, and no second answer is sent.
func TestUnknownReconciledOnReconnect(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		cut     func(*hermestest.Server)
		state   State
		detail  string
		answers int
	}{
		{"lost before the gateway took it", func(s *hermestest.Server) { s.LoseNext("request.answer") }, StatePending, "listed it again", 0},
		{"taken, then the link dropped", func(s *hermestest.Server) { s.CutOnNext("request.answer") }, StateSentUnknown, "no longer waits", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Requests})
			defer srv.Close()
			// The redial waits until the answer has returned: a listing
			// taken while the answer is in flight concludes nothing.
			f, client, ctx, waitDials, release := newHeldGatewayRig(t, srv, true)
			waitDials(1)
			ref, err := client.CreateSession(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := client.Call(ctx, "prompt.submit", map[string]any{"session_id": ref.ID, "text": "approve-me: git reset --hard HEAD"}, nil); err != nil {
				t.Fatal(err)
			}
			key := f.waitChange(t, "arrival", func(c Change) bool { return c.Kind == ChangeArrived }).Request.Key
			tt.cut(srv)
			if err := f.in.Answer(ctx, key, "once", "tray", false); !errors.As(err, new(*UnknownOutcomeError)) {
				t.Fatalf("answer cut after the write: %v", err)
			}
			release()
			waitDials(2)
			r := f.waitChange(t, "reconciled", func(c Change) bool {
				return c.Request.Key == key && c.Request.State == tt.state && strings.Contains(c.Request.Outcome.Detail, tt.detail)
			}).Request
			if n := len(srv.Answers()); n != tt.answers {
				t.Fatalf("the gateway took %d answers before the second, want %d", n, tt.answers)
			}
			err = f.in.Answer(ctx, key, "once", "window", false)
			if tt.state != StatePending {
				if err == nil {
					t.Fatalf("a second answer was accepted on %+v", r)
				}
				return
			}
			if err != nil {
				t.Fatalf("answer again: %v", err)
			}
			if got := srv.Answers(); len(got) != 1 || got[0].Choice != "once" || got[0].Command != "git reset --hard HEAD" {
				t.Fatalf("gateway answers %+v", got)
			}
			if r := f.get(t, key); r.State != StateResolved {
				t.Fatalf("after answering again: %s %q", r.State, r.Outcome.Detail)
			}
		})
	}
}

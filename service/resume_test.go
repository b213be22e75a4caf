package service

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
)

// TestResumeDecision: a listing splits the followed sessions into live
// (resumed) and gone; a failed listing decides nothing, and a gateway
// that cannot list at all has every one resumed.
func TestResumeDecision(t *testing.T) {
	t.Parallel()
	listed := source.Discovery{Gateway: "lab", Sessions: []source.LiveSession{
		{ID: "l1", Key: "k1"}, {ID: "l2", Key: "k2", Followed: true}, {ID: "l3"},
	}}
	for _, tc := range []struct {
		name    string
		pending []string
		d       source.Discovery
		resume  []string // keys
		gone    []string
		decided bool
	}{
		{"live by stored key", []string{"k1"}, listed, []string{"k1"}, nil, true},
		{"live by live id", []string{"l1"}, listed, []string{"k1"}, nil, true},
		{"ended while away", []string{"k9"}, listed, nil, []string{"k9"}, true},
		{"both", []string{"k1", "k9"}, listed, []string{"k1"}, []string{"k9"}, true},
		{"already followed", []string{"k2"}, listed, nil, nil, true},
		{"listed without a key", []string{"l3"}, listed, []string{"l3"}, nil, true},
		{"empty listing", []string{"k1"}, source.Discovery{Gateway: "lab"}, nil, []string{"k1"}, true},
		{"listing failed", []string{"k1"}, source.Discovery{Err: "timeout", Sessions: listed.Sessions}, nil, nil, false},
		{"cannot list", []string{"k1", "k9"}, source.Discovery{Err: "no session.active_list", Unsupported: true}, []string{"k1", "k9"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resume, gone, decided := resumeDecision(tc.pending, tc.d)
			var keys []string
			for _, l := range resume {
				keys = append(keys, l.Key)
			}
			if decided != tc.decided || !slices.Equal(keys, tc.resume) || !slices.Equal(gone, tc.gone) {
				t.Fatalf("resume %v gone %v decided %v; want %v %v %v", keys, gone, decided, tc.resume, tc.gone, tc.decided)
			}
		})
	}
}

// TestResumeOnlyLiveFollowedSessions: Herald starts with followed
// sessions saved; one ended while it was not running (the gateway
// restarted). Herald resumes only the live ones: the gateway never gets a
// session.resume for the ended one (which would build an agent for it),
// and a notice says in a sentence that it is no longer followed.
func TestResumeOnlyLiveFollowedSessions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		follow    func(ended, live, liveID string) []string
		resumed   int // session.resume calls the gateway gets
		gone      bool
		attachedL bool // the live session is attached to Herald
	}{
		{"live only", func(_, live, _ string) []string { return []string{live} }, 1, false, true},
		{"live by its live id", func(_, _, liveID string) []string { return []string{liveID} }, 1, false, true},
		{"ended only", func(ended, _, _ string) []string { return []string{ended} }, 0, true, false},
		{"ended and live", func(ended, live, _ string) []string { return []string{ended, live} }, 1, true, true},
	} {
		for _, d := range []hermestest.Dialect{hermestest.Legacy, hermestest.Modern} {
			t.Run(tc.name+"/"+d.String(), func(t *testing.T) {
				t.Parallel()
				r := newLiveRig(t, d, FollowAsk)
				_, ended := r.srv.CreateSession()
				r.srv.Restart() // Herald was not running: the session died
				liveID, live := r.srv.CreateSession()
				if _, err := r.svc.AddSource(SourceConfig{Kind: KindGateway, Config: source.Config{Name: "lab", URL: r.srv.URL, Secrets: map[string]string{"token": r.srv.Token()}},
					Resume: tc.follow(ended, live, liveID)}); err != nil {
					t.Fatal(err)
				}
				r.wait("the first listing", func() bool { return !r.listed().At.IsZero() })
				r.wait("the resumes to finish", func() bool { return r.svc.attachesInFlight() == 0 })
				if tc.attachedL {
					r.wait("the live session attached", func() bool {
						for _, s := range r.srv.Sessions() {
							if s.ID == liveID {
								return s.Attached
							}
						}
						return false
					})
				}
				r.step() // one more listing: nothing else happens
				resumes := 0
				for _, m := range r.srv.Methods() {
					if m == "session.resume" {
						resumes++
					}
				}
				if resumes != tc.resumed {
					t.Errorf("the gateway got %d session.resume, want %d (methods %v)", resumes, tc.resumed, r.srv.Methods())
				}
				for _, s := range r.srv.Sessions() {
					if s.StoredID == ended {
						t.Errorf("the ended session %s is live again on the gateway (as %s): Herald resumed it", ended, s.ID)
					}
				}
				if o := r.noticesOf(NoticeOffer); tc.attachedL && len(o) != 0 {
					t.Errorf("Herald offered the session it resumes: %+v", o)
				}
				gone := r.noticesOf(NoticeGone)
				if !tc.gone {
					if len(gone) != 0 {
						t.Errorf("gone notices %+v for live sessions", gone)
					}
					return
				}
				if len(gone) != 1 || gone[0].Key != ended || !strings.Contains(gone[0].Text, "no longer follows it") || !strings.Contains(gone[0].Text, "ended") {
					t.Fatalf("gone notices %+v, want one for %s saying it ended", gone, ended)
				}
				// Herald knows no name for it: the id is a detail, not its name.
				if g := gone[0]; g.Name != "" || !strings.Contains(g.Text, "(its id was "+ended+")") {
					t.Errorf("an unnamed gone session is said as %q (name %q), want its id as a detail", g.Text, g.Name)
				}
				if f := r.noticesOf(NoticeFollowFailed); len(f) != 0 {
					t.Errorf("follow failures %+v", f)
				}
			})
		}
	}
}

// TestGoneSessionNamedFromHistory: a followed session that ended while
// Herald was not running is said by the newest name the history recorded
// for it, the one name every surface gave it, not by its id.
func TestGoneSessionNamedFromHistory(t *testing.T) {
	t.Parallel()
	r := newLiveRig(t, hermestest.Modern, FollowAsk)
	_, ended := r.srv.CreateSession()
	r.srv.Restart()
	// The newest entry recorded only the untitled fallback: it names
	// nothing, so the name recorded before it stands.
	for i, title := range []string{"an older name", "Fix the build", "Untitled session"} {
		e := approval.Entry{Kind: approval.ChangeArrived, Key: fmt.Sprintf("lab/k%d", i), Gateway: "lab", StoredSession: ended, SessionTitle: title, State: approval.StatePending}
		if err := r.svc.cfg.Store.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.svc.cfg.Store.Record(approval.Entry{Kind: approval.ChangeArrived, Key: "lab/other", Gateway: "lab", StoredSession: "another", SessionTitle: "Not this one", State: approval.StatePending}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.AddSource(SourceConfig{Kind: KindGateway, Config: source.Config{Name: "lab", URL: r.srv.URL, Secrets: map[string]string{"token": r.srv.Token()}},
		Resume: []string{ended}}); err != nil {
		t.Fatal(err)
	}
	r.wait("the gone notice", func() bool { return len(r.noticesOf(NoticeGone)) == 1 })
	g := r.noticesOf(NoticeGone)[0]
	if want := `Session "Fix the build" ended on lab while Herald was not running`; g.Name != "Fix the build" || !strings.HasPrefix(g.Text, want) || strings.Contains(g.Text, ended) {
		t.Fatalf("gone notice %q (name %q), want it to start %q without the id", g.Text, g.Name, want)
	}
}

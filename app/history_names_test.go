package app

import (
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/spooftest"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/service"
)

// TestHistoryEntryDisplaySession: the history shows a session's name as
// the card and the panel do (VisibleLine, clipped): never a raw control
// or direction change.
func TestHistoryEntryDisplaySession(t *testing.T) {
	t.Parallel()
	long := ""
	for range liveTitleMax + 10 {
		long += "x"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"title", "Nightly backup check", "Nightly backup check"},
		{"short id", "a1b2c3d4", "a1b2c3d4"},
		{"bidi", "evil\u202egnp.exe", "evil⟦U+202E⟧gnp.exe"},
		{"escape and line break", "a\x1b[2Jb\nc", "a␛[2Jb⏎c"},
		{"too long", long, long[:liveTitleMax]},
		{"none", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := historyEntry(service.LogEntry{Entry: approval.Entry{Gateway: "lab", Session: "s1"}, SessionName: tc.in})
			if h.DisplaySession != tc.want {
				t.Errorf("shown as %q, want %q", h.DisplaySession, tc.want)
			}
			if _, raw := spooftest.Raw(h.DisplaySession, false); raw {
				t.Errorf("%q holds a raw character", h.DisplaySession)
			}
			if card := displaySessions([]service.SessionView{{Gateway: "lab", ID: "s1", Title: tc.in}}, nil)[0].Name; tc.in != "" && card != h.DisplaySession {
				t.Errorf("the card shows %q, the history %q", card, h.DisplaySession)
			}
		})
	}
}

// TestOneNamePerSession: a titled session has one name on the gateway
// card, in the Sessions panel, on its approval's sheet and in the history.
func TestOneNamePerSession(t *testing.T) {
	a, p, srv, live := desktop(t)
	const title = "Nightly\u202e backup"
	const shown = "Nightly⟦U+202E⟧ backup"
	if err := srv.SetTitle(live, title); err != nil {
		t.Fatal(err)
	}
	var card, panel string
	p.waitFor(t, "the title on the card and the panel", func(f *fakePlatform) bool {
		card, panel = "", ""
		for _, s := range f.last.Sessions {
			if s.ID == live {
				card = s.Name
			}
		}
		for _, g := range f.last.Live {
			for _, s := range g.Sessions {
				if s.ID == live {
					panel = s.Name
				}
			}
		}
		return card == shown && panel == shown
	})
	srq, agent, err := srv.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./build"})
	if err != nil {
		t.Fatal(err)
	}
	var key, sheet string
	p.waitFor(t, "the approval", func(f *fakePlatform) bool {
		for _, r := range f.last.Approvals {
			if r.RequestID == srq {
				key, sheet = r.Key, r.Display.Session
			}
		}
		return key != ""
	})
	if sheet != shown {
		t.Errorf("the sheet names the session %q, the card %q", sheet, shown)
	}
	if err := a.Answer(key, "deny", false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-agent:
	case <-time.After(guard):
		t.Fatal("the agent got no answer")
	}
	hist, err := a.History(100, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, h := range hist {
		if h.Key != key {
			continue
		}
		n++
		if h.DisplaySession != shown {
			t.Errorf("history %s entry names the session %q, the card %q", h.State, h.DisplaySession, shown)
		}
	}
	if n == 0 {
		t.Fatalf("no history for %s: %+v", key, hist)
	}
}

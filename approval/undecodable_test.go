package approval

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// TestUndecodableCommandIsDenyOnly: a command whose bytes were not valid
// UTF-8 reaches Herald with U+FFFD in their place (JSON decoders replace
// them), so "rm a\xff" and "rm a\xfe" would look the same. Such a request
// is deny-only and says why; a plain command is not affected.
func TestUndecodableCommandIsDenyOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, nil)
	raw := func(id, cmdJSON string) wire.Event {
		ev := wire.Event{Gateway: "g1", Session: "s1", Kind: wire.ApprovalServerRequest, ReceivedAt: t0, RequestID: id,
			Payload: []byte(`{"session_id": "s1", "request_id": "` + id + `", "description": "d", "choices": ["once", "session", "always", "deny"], "command": ` + cmdJSON + `}`)}
		if err := ev.DecodeData(); err != nil {
			t.Fatal(err)
		}
		return ev
	}
	for _, tc := range []struct {
		id, cmd  string
		denyOnly bool
	}{
		{"a", "\"rm -rf ./a\xff\"", true},
		{"b", "\"rm -rf ./a\xfe\"", true},
		{"c", `"rm -rf ./a\udc80"`, true}, // a lone surrogate escape
		{"d", `"rm -rf ./a\ufffd"`, true}, // indistinguishable from the above once decoded
		{"e", `"rm -rf ./a_b"`, false},
	} {
		f.in.Ingest(raw(tc.id, tc.cmd))
		r := f.get(t, f.in.srqKey("g1", "s1/"+tc.id))
		if got := r.Conflict == UndecodableWhy; got != tc.denyOnly || r.OneClickApprovable() == tc.denyOnly {
			t.Errorf("%s %q: conflict %q, one-click %v", tc.id, tc.cmd, r.Conflict, r.OneClickApprovable())
		}
		if !tc.denyOnly {
			continue
		}
		var ce *ConflictError
		if err := f.in.Answer(ctx, r.Key, ChoiceOnce, "window", false); !errors.As(err, &ce) {
			t.Errorf("%s: approving %q: %v", tc.id, r.DisplayCommand(), err)
		} else if tc.id == "a" {
			t.Logf("user sees: %v", err)
		}
		if err := f.in.Answer(ctx, r.Key, ChoiceDeny, "window", false); err != nil {
			t.Errorf("%s: deny: %v", tc.id, err)
		}
	}
	if a, b := f.get(t, f.in.srqKey("g1", "s1/a")).DisplayCommand(), f.get(t, f.in.srqKey("g1", "s1/b")).DisplayCommand(); a != b {
		t.Logf("the decoder kept the bytes apart (%q, %q)", a, b)
	}
}

// TestUndecodableOfferedAsDenyOnly: surfaces offer such a request as deny
// only (Display.Offered, with the reason), as they do an unbound one.
func TestUndecodableOfferedAsDenyOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(srq("g1", "s1", "srq-1", "rm -rf ./a\ufffd", t0))
	d := f.only(t).Display()
	if strings.Join(d.Offered, "/") != "deny" || d.DenyOnly != UndecodableWhy { // Herald's words, its ⟦U+FFFD⟧ as written
		t.Fatalf("offered %q, deny_only %q", d.Offered, d.DenyOnly)
	}
	f2 := newFixture(t, nil)
	f2.in.Ingest(srq("g1", "s1", "srq-1", "rm -rf ./a", t0))
	if d := f2.only(t).Display(); strings.Join(d.Offered, "/") != "once/session/always/deny" || d.DenyOnly != "" {
		t.Fatalf("a plain command: offered %q, deny_only %q", d.Offered, d.DenyOnly)
	}
}

package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/wire"
)

// An approval of something other than a command (a sandbox's folder or
// site request, whose field names are not pinned) shows every field it
// carries, made safe, and accepts only deny.
func TestApprovalWithoutCommandShowsItsFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(event("g1", "run_1", wire.ApprovalRequest, t0, map[string]any{
		"event": "approval.request", "run_id": "run_1", "request_id": "q1", "choices": []string{"once", "deny"},
		"kind": "folder", "path": "/home/ana/Projects\x1b[2J", "access": "read-write", "scope": map[string]any{"recursive": true},
		"description": "Hermes wants to read and write a folder",
	}))
	r := f.only(t)
	want := []Field{{"access", "read-write"}, {"kind", "folder"}, {"path", "/home/ana/Projects\x1b[2J"}, {"scope", `{"recursive":true}`}}
	if fmt.Sprint(r.Fields) != fmt.Sprint(want) {
		t.Fatalf("fields %q, want %q", r.Fields, want)
	}
	d := r.Display()
	if !d.Unseen || !strings.Contains(d.Title, "asks to approve something other than a command") || d.Command != "" {
		t.Errorf("display: %+v", d)
	}
	for _, x := range d.Fields {
		if strings.ContainsRune(x.Value, '\x1b') {
			t.Errorf("field %s shown raw: %q", x.Name, x.Value)
		}
	}
	if r.OneClickApprovable() {
		t.Error("approvable in one click")
	}
	if err := f.in.Answer(context.Background(), r.Key, ChoiceOnce, "test", false); !errors.Is(err, ErrCommandUnseen) {
		t.Fatalf("approve: %v", err)
	}
	if err := f.in.Answer(context.Background(), r.Key, ChoiceDeny, "test", false); err != nil {
		t.Fatalf("deny: %v", err)
	}
}

// The fields kept are bounded in number and size.
func TestApprovalFieldsBounded(t *testing.T) {
	t.Parallel()
	p := map[string]any{"command": ""}
	for i := range 40 {
		p[fmt.Sprintf("f%02d", i)] = strings.Repeat("v", 4096)
	}
	p[strings.Repeat("n", 500)] = "x"
	f := newFixture(t, nil)
	f.in.Ingest(event("g1", "s1", wire.ApprovalRequest, t0, p))
	fs := f.only(t).Fields
	if len(fs) != maxFields+1 || fs[maxFields].Name != "…" {
		t.Fatalf("%d fields, last %+v", len(fs), fs[len(fs)-1])
	}
	for _, x := range fs {
		if len(x.Name) > maxFieldName+3 || len(x.Value) > maxFieldValue+3 {
			t.Errorf("field %q of %d bytes", x.Name[:10], len(x.Value))
		}
	}
	// A command approval carries no fields.
	f.in.Ingest(legacy("g1", "s2", "rm -rf ./a", t0))
	for _, r := range f.in.Pending() {
		if r.Command != "" && len(r.Fields) != 0 {
			t.Errorf("a command approval has fields: %+v", r.Fields)
		}
	}
}

package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNewListingBounds: a listing keeps at most MaxListed entries (and
// then says it is incomplete); an id or command past its bound is passed
// on empty, so it matches nothing; too many choices are dropped.
func TestNewListingBounds(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxListedCommand+1)
	for _, tc := range []struct {
		name     string
		n        int
		in       ListedApproval
		want     ListedApproval
		complete bool
	}{
		{"as listed", 1, ListedApproval{ID: "srq-1", RequestID: "7", Command: "ls", Choices: []string{"once", "deny"}}, ListedApproval{ID: "srq-1", RequestID: "7", Command: "ls", Choices: []string{"once", "deny"}}, true},
		{"long id", 1, ListedApproval{ID: strings.Repeat("9", MaxListedID+1), RequestID: "7", Command: "ls"}, ListedApproval{RequestID: "7", Command: "ls"}, true},
		{"long command", 1, ListedApproval{RequestID: "7", Command: long}, ListedApproval{RequestID: "7"}, true},
		{"many choices", 1, ListedApproval{RequestID: "7", Command: "ls", Choices: make([]string, MaxListedChoices+1)}, ListedApproval{RequestID: "7", Command: "ls"}, true},
		{"too many entries", MaxListed + 1, ListedApproval{RequestID: "7", Command: "ls"}, ListedApproval{RequestID: "7", Command: "ls"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := make([]ListedApproval, tc.n)
			for i := range all {
				all[i] = tc.in
			}
			l := NewListing("s1", true, all)
			if l.SessionID != "s1" || l.Complete != tc.complete || len(l.Approvals) != min(tc.n, MaxListed) {
				t.Fatalf("listing %q complete=%v with %d entries", l.SessionID, l.Complete, len(l.Approvals))
			}
			got, _ := json.Marshal(l.Approvals[0])
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Fatalf("entry %s, want %s", got, want)
			}
		})
	}
	if ListedID(json.RawMessage(`7`)) != "7" || ListedID(json.RawMessage(`"srq-1"`)) != "srq-1" || ListedID(json.RawMessage(`null`)) != "" || ListedID(json.RawMessage(`"`+strings.Repeat("a", MaxListedID+1)+`"`)) != "" {
		t.Fatal("ListedID")
	}
}

package bridge

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDecodeState: a poll is read item by item: unknown fields are
// skipped, items past MaxItems dropped, and anything that is not a poll's
// object refused.
func TestDecodeState(t *testing.T) {
	t.Parallel()
	many := make([]string, MaxItems+5)
	for i := range many {
		many[i] = fmt.Sprintf(`{"kind": "approval", "id": "a%d", "command": "ls"}`, i)
	}
	tests := []struct {
		name  string
		body  string
		items int
		ok    bool
	}{
		{"a poll", `{"protocol": 1, "instance": "i", "cursor": 3, "items": [{"kind": "approval", "id": "a", "command": "ls", "origin": {"surface": "cli"}}], "recent": [{"id": "b", "outcome": "answered", "by": "me", "choice": "once"}], "watchers": 1, "new_field": {"x": [1]}}`, 1, true},
		{"no items", `{"protocol": 1, "instance": "i", "items": null}`, 0, true},
		{"too many items", `{"protocol": 1, "instance": "i", "items": [` + strings.Join(many, ",") + `]}`, MaxItems, true},
		{"not an object", `[1, 2]`, 0, false},
		{"items not a list", `{"items": {"a": 1}}`, 0, false},
		{"cut short", `{"protocol": 1, "items": [{"id": "a"`, 0, false},
		{"a wrong type", `{"protocol": "one"}`, 0, false},
	}
	for _, tt := range tests {
		st, err := decodeState(strings.NewReader(tt.body))
		if (err == nil) != tt.ok || len(st.Items) != tt.items {
			t.Errorf("%s: %d items, %v", tt.name, len(st.Items), err)
		}
		if tt.name == "a poll" && (st.Cursor != 3 || st.Instance != "i" || st.Items[0].Origin.Surface != "cli" || len(st.Recent) != 1 || st.Recent[0].By != "me") {
			t.Errorf("decoded %+v", st)
		}
	}
	if _, err := decodeState(strings.NewReader(`"x"`)); !errors.Is(err, errNotAPoll) {
		t.Errorf("a string: %v", err)
	}
}

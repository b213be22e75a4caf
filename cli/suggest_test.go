package cli

import "testing"

// TestDidYouMean: a mistyped command is named with the one it is close
// to (a letter missing, extra, wrong or two swapped); a word close to
// none, or as close to two, names nothing.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ typed, want string }{
		{"wacth", ` (did you mean "watch"?)`},
		{"watc", ` (did you mean "watch"?)`},
		{"pendng", ` (did you mean "pending"?)`},
		{"apporve", ` (did you mean "approve"?)`},
		{"Approve", ` (did you mean "approve"?)`},
		{"anwser", ` (did you mean "answer"?)`},
		{"lgo", ` (did you mean "log"?)`},
		{"vesion", ` (did you mean "version"?)`},
		{"frobnicate", ""},
		{"x", ""},
		{"", ""},
	} {
		if got := DidYouMean(tc.typed); got != tc.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
	// Equally near two names: no guess.
	if got := closest("cat", []string{"bat", "hat"}); got != "" {
		t.Errorf("closest between two = %q, want none", got)
	}
}

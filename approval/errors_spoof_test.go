package approval

import (
	"errors"
	"testing"

	"github.com/herald-desktop/herald/approval/spooftest"
)

// TestSpoofingErrors: a gateway's words quoted in an error (the withdrawal
// reason `herald approve` prints, a failed send, a failure, who answered)
// are shown as VisibleLine, never raw.
func TestSpoofingErrors(t *testing.T) {
	t.Parallel()
	for _, c := range spooftest.Errors {
		for name, err := range map[string]error{
			"withdrawn": &EndedError{State: StateCancelled, Outcome: Outcome{Reason: CancelRequestCancel, Detail: c.Command}},
			"failed":    &EndedError{State: StateFailed, Outcome: Outcome{Error: c.Command}},
			"dismissed": &EndedError{State: StateCancelled, Outcome: Outcome{Reason: CancelDismissed, Surface: c.Command}},
			"send":      &SendError{Gateway: "lab", Choice: "once", Err: errors.New(c.Command)},
			"answered":  &AnsweredError{Choice: "once", Surface: c.Command},
		} {
			if err := spooftest.Check(err.Error(), c, false); err != nil {
				t.Errorf("%s, %s: %v: %q", c.Name, name, err, err.Error())
			}
		}
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"plain", "cat Re\u0301sume\u0301", "⟦U+202E⟧ ␛ ⏎\n ⇥ ␠", "a\x1b[2K\rb\u202e\u200b\ufffd\xff\x00\t",
		"e\u0301\u0301\u0301\u0301", "a\u3164b",
	} {
		v := Visible(s)
		if got := Guard(v, true); got != v {
			t.Errorf("Guard changed Visible output %q to %q", v, got)
		}
		if got := Guard(VisibleLine(s), false); got != VisibleLine(s) {
			t.Errorf("Guard changed VisibleLine output %q to %q", VisibleLine(s), got)
		}
	}
	if got, want := Guard("a\x1b]52;c;x\x07\r\nb\u202e", true), "a␛]52;c;x⟦BEL⟧⟦CR⟧\nb⟦U+202E⟧"; got != want { // composed text keeps its line breaks
		t.Errorf("Guard = %q, want %q", got, want)
	}
	if got, want := Guard("a\nb", false), "a⏎b"; got != want {
		t.Errorf("Guard one line = %q, want %q", got, want)
	}
}

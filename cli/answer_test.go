package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
)

// TestClarifyText: a choice number picks its choice; a number that is no
// choice of a question with choices is refused (the user meant a choice,
// so "9" must not reach the agent as the answer); other text and numbers
// for a question without choices go as typed.
func TestClarifyText(t *testing.T) {
	t.Parallel()
	withChoices := approval.Request{Kind: approval.KindClarify, Question: "Deploy?", Choices: []string{"yes", "no"}}
	open := approval.Request{Kind: approval.KindClarify, Question: "How many replicas?"}
	for _, tc := range []struct {
		name    string
		r       approval.Request
		text    string
		want    string
		refused bool
	}{
		{"first choice", withChoices, "1", "yes", false},
		{"last choice", withChoices, "2", "no", false},
		{"past the last", withChoices, "9", "", true},
		{"zero", withChoices, "0", "", true},
		{"own words", withChoices, "staging please", "staging please", false},
		{"no choices: a number is text", open, "3", "3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := clarifyText(tc.r, tc.text)
			if tc.refused {
				var u usageError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), "nothing was sent") || !strings.Contains(err.Error(), "--text") {
					t.Fatalf("clarifyText(%q) = %q, %v; want a usage error naming --text", tc.text, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("clarifyText(%q) = %q, %v; want %q", tc.text, got, err, tc.want)
			}
		})
	}
}

// TestAnsweredLineShowsChoiceVisibly: the confirmation of `herald answer`
// echoes a clarify choice, which is the gateway's text: escape sequences
// and direction overrides must reach the terminal as markers.
func TestAnsweredLineShowsChoiceVisibly(t *testing.T) {
	t.Parallel()
	r := approval.Request{Key: "lab/srq/1", Kind: approval.KindClarify, Outcome: approval.Outcome{Choice: "prod\x1b[2K\r\u202eyes"}}
	line := answeredLine(r)
	if strings.ContainsAny(line, "\x1b\r\u202e") {
		t.Fatalf("answeredLine = %q: raw control or format characters reach the terminal", line)
	}
	if !strings.Contains(line, approval.VisibleLine(r.Outcome.Choice)) {
		t.Fatalf("answeredLine = %q, want the choice as shown everywhere (%q)", line, approval.VisibleLine(r.Outcome.Choice))
	}
}

// TestPasswordReadEndsOnInterrupt: Ctrl-C during the echo-off password
// read returns at once and restores the terminal (echo back on); before,
// the read went on, took the next line typed as the password and then
// failed with "no running Herald found".
func TestPasswordReadEndsOnInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	defer close(block)
	restored := false
	done := make(chan error, 1)
	go func() {
		_, err := readUntilDone(ctx, func() ([]byte, error) { <-block; return []byte("next line typed"), nil }, func() { restored = true })
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("read after Ctrl-C = %v, want context.Canceled", err)
	}
	if !restored {
		t.Fatal("the terminal was not restored: echo stays off")
	}
	// Without an interrupt the value read is returned as it is.
	b, err := readUntilDone(context.Background(), func() ([]byte, error) { return []byte("pw"), nil }, func() { t.Error("restored without an interrupt") })
	if err != nil || string(b) != "pw" {
		t.Fatalf("read = %q, %v", b, err)
	}
}

package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// textInbox adds text answers to the key handler's fake service.
type textInbox struct {
	*fakeInbox
	texts []string
}

func (f *textInbox) AnswerText(_ context.Context, id string, v *wire.Secret, _ string) error {
	f.texts = append(f.texts, service.ShortKey(id)+" "+string(v.Reveal()))
	return nil
}

// TestWatchKeysAnswerQuestions: in watch, a choice number answers the
// oldest clarify question with that choice, "t TEXT" with free text, and
// the approval keys never answer a question (nor a password prompt).
func TestWatchKeysAnswerQuestions(t *testing.T) {
	t.Parallel()
	base := &fakeInbox{}
	in := &textInbox{fakeInbox: base}
	out := &strings.Builder{}
	k := &keys{out: &printer{w: out}, in: in, now: func() time.Time { return t0.Add(time.Minute) }}
	clarify := approval.Request{Key: "lab/clarify/c1", Kind: approval.KindClarify, Question: "Env?", Choices: []string{"dev", "prod"}, State: approval.StatePending}
	sudo := approval.Request{Key: "lab/sudo/u1", Kind: approval.KindSudo, State: approval.StatePending}
	base.pending = []approval.Request{clarify, sudo}
	cid := service.ShortKey(clarify.Key)

	press := func(l string) string {
		out.Reset()
		if k.handle(context.Background(), l) {
			t.Fatalf("%q quit", l)
		}
		return out.String()
	}
	if got := press("3"); !strings.Contains(got, "no choice 3") {
		t.Fatalf("3: %q", got)
	}
	if got := press("o"); !strings.Contains(got, "No approval is waiting") || !strings.Contains(got, "t YOUR ANSWER") || !strings.Contains(got, "herald answer ID") {
		t.Fatalf("a bare approval key with only questions waiting: %q", got)
	}
	press("t staging please")
	if len(in.texts) != 1 || in.texts[0] != cid+" staging please" {
		t.Fatalf("text answers %v", in.texts)
	}
	press("2")
	if a := base.answers; len(a) != 1 || a[0] != cid+" prod false" {
		t.Fatalf("choice answers %v", a)
	}
	if got := press("1"); !strings.Contains(got, "No question is waiting") {
		t.Fatalf("with only a password prompt left: %q", got)
	}

	// Two questions: a bare number is not sent; with the id it is.
	q1 := approval.Request{Key: "lab/clarify/q1", Kind: approval.KindClarify, Question: "A?", Choices: []string{"x", "y"}, State: approval.StatePending}
	q2 := approval.Request{Key: "lab/clarify/q2", Kind: approval.KindClarify, Question: "B?", Choices: []string{"u", "v"}, State: approval.StatePending}
	base.pending = append(base.pending, q1, q2)
	if got := press("2"); !strings.Contains(got, "Not sent: 2 questions") || len(base.answers) != 1 {
		t.Fatalf("bare number with two questions: %q, answers %v", got, base.answers)
	}
	press("2 " + service.ShortKey(q2.Key))
	if a := base.answers; len(a) != 2 || a[1] != service.ShortKey(q2.Key)+" v false" {
		t.Fatalf("answers %v", a)
	}
}

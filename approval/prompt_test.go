package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/wire"
)

// The gateway client answers prompts too.
var _ PromptAnswerer = (*gateway.Client)(nil)

// RespondPrompt records the prompt answer (the fake stands in for the
// gateway, so it may keep the value) and replies as configured.
func (f *fakeAnswerer) RespondPrompt(_ context.Context, a wire.PromptAnswer) (bool, error) {
	method := a.Kind + ".respond"
	if a.ServerRequest {
		method = "response"
		if a.Lock {
			method = "clarify.lock"
		}
	}
	n, err := f.record(sent{method, a.SessionID, string(a.Value.Reveal()), a.RequestID + "/" + a.QuestionID})
	return n > 0, err
}

// promptEvent builds a prompt of kind in the event (srqID == "") or
// server-request form.
func promptEvent(gw, sid, kind, id, srqID string, at time.Time) wire.Event {
	var payload map[string]any
	k := kind + ".request"
	if srqID != "" {
		k = kind
	}
	switch kind {
	case "clarify":
		payload = map[string]any{"question": "Deploy to which env?", "choices": []string{"dev", "prod"}, "request_id": id}
		if srqID != "" {
			payload = map[string]any{"session_id": sid, "questions": []any{map[string]any{"qid": "q0", "question": "Deploy to which env?", "choices": []string{"dev", "prod"}}}}
		}
	case "sudo":
		payload = map[string]any{"request_id": id}
		if srqID != "" {
			payload = map[string]any{"session_id": sid, "command": "sudo apt-get install jq"}
		}
	case "secret":
		payload = map[string]any{"prompt": "Enter your OpenWeather key", "env_var": "OPENWEATHER_API_KEY", "request_id": id}
		if srqID != "" {
			payload = map[string]any{"session_id": sid, "prompt": "Enter your OpenWeather key", "env_var": "OPENWEATHER_API_KEY"}
		}
	}
	ev := event(gw, sid, k, at, payload)
	ev.RequestID = srqID
	return ev
}

// TestPromptAnsweredByText: each kind in each dialect arrives with its
// fields and deadline, is answered once with text (sent in the form it
// came in), and the audit log records the answer without the value.
func TestPromptAnsweredByText(t *testing.T) {
	t.Parallel()
	for _, kind := range []Kind{KindClarify, KindSudo, KindSecret} {
		for _, form := range []string{"event", "srq"} {
			t.Run(fmt.Sprintf("%s/%s", kind, form), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, nil)
				srqID := ""
				if form == "srq" {
					srqID = "srq-1"
				}
				f.in.Ingest(promptEvent("g1", "s1", string(kind), "ab12cd34", srqID, t0))
				r := f.only(t)
				if r.Kind != kind || r.State != StatePending || r.Session != "s1" {
					t.Fatalf("request %+v", r)
				}
				if want := t0.Add(promptTimeouts[kind]); !r.ExpiresAt.Equal(want) {
					t.Fatalf("expires %v, want %v", r.ExpiresAt, want)
				}
				switch kind {
				case KindClarify:
					if r.Question != "Deploy to which env?" || strings.Join(r.Choices, ",") != "dev,prod" {
						t.Fatalf("clarify %+v", r)
					}
				case KindSecret:
					if r.EnvVar != "OPENWEATHER_API_KEY" || r.Prompt == "" {
						t.Fatalf("secret %+v", r)
					}
				}
				value := map[Kind]string{KindClarify: "staging, please", KindSudo: "pw-Tr0ub4dor&3", KindSecret: "sk-weather-0123456789abcdef"}[kind]
				if err := f.in.AnswerText(context.Background(), r.Key, wire.NewSecret([]byte(value)), "window"); err != nil {
					t.Fatal(err)
				}
				got := f.get(t, r.Key)
				want := map[Kind]string{KindClarify: value, KindSudo: "password provided", KindSecret: "secret provided"}[kind]
				if got.State != StateResolved || got.Outcome.Choice != want || got.Outcome.Surface != "window" {
					t.Fatalf("after answer: %+v", got)
				}
				calls := f.ans["g1"].sent()
				wantMethod := string(kind) + ".respond"
				wantID := "ab12cd34/"
				if form == "srq" {
					wantMethod, wantID = "response", "srq-1/"
					if kind == KindClarify {
						wantID = "srq-1/q0"
					}
				}
				if len(calls) != 1 || calls[0].method != wantMethod || calls[0].choice != value || calls[0].requestID != wantID {
					t.Fatalf("gateway got %+v, want %s %s", calls, wantMethod, wantID)
				}
				// First answer wins.
				err := f.in.AnswerText(context.Background(), r.Key, wire.NewSecret([]byte("again")), "cli")
				var ae *AnsweredError
				if !errors.As(err, &ae) || ae.Surface != "window" {
					t.Fatalf("second answer: %v", err)
				}
				if len(f.ans["g1"].sent()) != 1 {
					t.Fatal("a second answer reached the gateway")
				}
				entries, _ := f.store.List(Filter{})
				b, _ := json.Marshal(entries)
				if kind.Masked() && strings.Contains(string(b), value) {
					t.Fatalf("the audit log holds the %s value: %s", kind, b)
				}
				if !strings.Contains(string(b), want) || !strings.Contains(string(b), `"request_kind":"`+string(kind)+`"`) {
					t.Fatalf("audit log lacks the outcome %q: %s", want, b)
				}
			})
		}
	}
}

// TestPromptByChoice: a clarify prompt is answered with one of its
// choices (as from a notification or the tray); a password or secret
// cannot be answered by choice at all.
func TestPromptByChoice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	f.in.Ingest(promptEvent("g1", "s1", "clarify", "c1", "", t0))
	f.in.Ingest(promptEvent("g1", "s1", "sudo", "u1", "", t0))
	f.in.Ingest(promptEvent("g1", "s1", "secret", "x1", "", t0))
	if err := f.in.Answer(context.Background(), "g1/clarify/c1", "staging", "tray", false); err == nil || !strings.Contains(err.Error(), "not one of this question's choices") {
		t.Fatalf("unlisted choice: %v", err)
	}
	for _, k := range []string{"g1/sudo/u1", "g1/secret/x1"} {
		if err := f.in.Answer(context.Background(), k, "once", "notification", false); !errors.Is(err, ErrTypedOnly) {
			t.Fatalf("%s by choice: %v", k, err)
		}
	}
	if err := f.in.Answer(context.Background(), "g1/clarify/c1", "prod", "notification", false); err != nil {
		t.Fatal(err)
	}
	if r := f.get(t, "g1/clarify/c1"); r.State != StateResolved || r.Outcome.Choice != "prod" {
		t.Fatalf("clarify %+v", r)
	}
	if got := f.ans["g1"].sent(); len(got) != 1 || got[0].choice != "prod" || got[0].method != "clarify.respond" {
		t.Fatalf("gateway got %+v", got)
	}
}

// TestPromptWithdrawn: a prompt ends without an answer when it expires
// (the event form's <kind>.expire or Herald's own deadline), when a server
// request is cancelled, when the turn is interrupted, and when another
// client answered it first (Herald's answer then finds nothing pending).
func TestPromptWithdrawn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		srq    bool
		act    func(f *fixture, key string) error
		state  State
		reason CancelReason
	}{
		{"expire event", false, func(f *fixture, _ string) error {
			f.in.Ingest(event("g1", "s1", wire.SudoExpire, t0, map[string]any{"request_id": "u1"}))
			return nil
		}, StateExpired, ""},
		{"deadline", false, func(f *fixture, _ string) error {
			f.clk.Advance(120 * time.Second)
			return nil
		}, StateExpired, ""},
		{"deadline (srq)", true, func(f *fixture, _ string) error {
			f.clk.Advance(120 * time.Second)
			return nil
		}, StateExpired, ""},
		{"cancel timeout", true, func(f *fixture, _ string) error {
			f.in.Ingest(cancel("g1", "s1", "srq-1", "timeout", t0))
			return nil
		}, StateExpired, ""},
		{"cancel interrupted", true, func(f *fixture, _ string) error {
			f.in.Ingest(cancel("g1", "s1", "srq-1", "interrupted", t0))
			return nil
		}, StateCancelled, CancelInterrupted},
		{"interrupted turn", false, func(f *fixture, _ string) error {
			f.in.Ingest(event("g1", "s1", wire.MessageComplete, t0, map[string]any{"text": "", "status": "interrupted"}))
			return nil
		}, StateCancelled, CancelInterrupted},
		{"answered elsewhere", false, func(f *fixture, key string) error {
			f.ans["g1"].set(0, nil, nil)
			return f.in.AnswerText(context.Background(), key, wire.NewSecret([]byte("pw")), "cli")
		}, StateCancelled, CancelResolvedElsewhere},
		{"answered elsewhere (srq)", true, func(f *fixture, _ string) error {
			f.in.Ingest(cancel("g1", "s1", "srq-1", "resolved", t0))
			return nil
		}, StateCancelled, CancelResolvedElsewhere},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			id := ""
			if tt.srq {
				id = "srq-1"
			}
			f.in.Ingest(promptEvent("g1", "s1", "sudo", "u1", id, t0))
			// A blocked tool.complete concerns approvals, not prompts.
			f.in.Ingest(toolDone("g1", "s1", "ls", timedOut, t0))
			key := f.only(t).Key
			if f.only(t).State != StatePending {
				t.Fatalf("a tool result ended the prompt: %+v", f.only(t))
			}
			err := tt.act(f, key)
			f.waitChange(t, "prompt ended", func(c Change) bool { return c.Request.Key == key && !c.Request.State.Live() })
			r := f.get(t, key)
			if r.State != tt.state || r.Outcome.Reason != tt.reason {
				t.Fatalf("ended %s/%s (%+v), want %s/%s", r.State, r.Outcome.Reason, r.Outcome, tt.state, tt.reason)
			}
			if tt.name == "answered elsewhere" {
				var ee *EndedError
				if !errors.As(err, &ee) || !ee.Sent {
					t.Fatalf("answer error %v", err)
				}
				if strings.Contains(err.Error(), "pw") && !strings.Contains(err.Error(), "password") {
					t.Fatalf("error shows the value: %v", err)
				}
			}
			err = f.in.AnswerText(context.Background(), key, wire.NewSecret([]byte("late")), "cli")
			var ee *EndedError
			if !errors.As(err, &ee) {
				t.Fatalf("late answer: %v", err)
			}
			if tt.state == StateExpired && !strings.Contains(err.Error(), "question timed out") {
				t.Fatalf("expired text: %v", err)
			}
		})
	}
}

// TestPromptExpiresEachKind: every kind ends expired on its own expire
// event and on its deadline (clarify and secret 300 s, sudo 120 s), and
// not a moment before.
func TestPromptExpiresEachKind(t *testing.T) {
	t.Parallel()
	for _, kind := range []Kind{KindClarify, KindSudo, KindSecret} {
		for _, how := range []string{"event", "deadline"} {
			t.Run(string(kind)+"/"+how, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, nil)
				f.in.Ingest(promptEvent("g1", "s1", string(kind), "r1", "", t0))
				key := f.only(t).Key
				if how == "event" {
					f.in.Ingest(event("g1", "s1", string(kind)+".expire", t0, map[string]any{"request_id": "r1"}))
				} else {
					f.clk.Advance(promptTimeouts[kind] - time.Second)
					if r := f.get(t, key); r.State != StatePending {
						t.Fatalf("ended early: %s", r.State)
					}
					f.clk.Advance(time.Second)
				}
				f.waitChange(t, "expired", func(c Change) bool { return c.Request.Key == key && c.Request.State == StateExpired })
			})
		}
	}
}

// TestPromptMultiQuestion: each question of a clarify server request is
// its own request, answered with clarify.lock; a cancel ends all of them.
func TestPromptMultiQuestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ev := event("g1", "s1", wire.ClarifyServerRequest, t0, map[string]any{"session_id": "s1", "questions": []any{
		map[string]any{"qid": "q0", "question": "Env?", "choices": []string{"dev", "prod"}},
		map[string]any{"qid": "q1", "question": "Why?"},
		map[string]any{"qid": "q2", "question": "When?"},
	}})
	ev.RequestID = "srq-7"
	f.in.Ingest(ev)
	rs := f.in.Pending()
	if len(rs) != 3 || rs[1].QuestionID != "q1" || rs[1].Questions != 3 || len(rs[1].Choices) != 0 {
		t.Fatalf("requests %+v", rs)
	}
	if err := f.in.AnswerText(context.Background(), rs[1].Key, wire.NewSecret([]byte("because")), "cli"); err != nil {
		t.Fatal(err)
	}
	if got := f.ans["g1"].sent(); len(got) != 1 || got[0].method != "clarify.lock" || got[0].requestID != "srq-7/q1" {
		t.Fatalf("gateway got %+v", got)
	}
	f.in.Ingest(cancel("g1", "s1", "srq-7", "timeout", t0))
	for _, r := range f.in.Snapshot().Requests {
		want := StateExpired
		if r.QuestionID == "q1" {
			want = StateResolved
		}
		if r.State != want {
			t.Fatalf("%s: %s, want %s", r.QuestionID, r.State, want)
		}
	}
}

// TestPromptBounds: gateway text is cut and choices capped; a prompt
// without a request id or session fails visibly instead of hanging.
func TestPromptBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var choices []string
	for i := 0; i < 50; i++ {
		choices = append(choices, fmt.Sprintf("choice %d %s", i, strings.Repeat("x", 300)))
	}
	f.in.Ingest(event("g1", "s1", wire.ClarifyRequest, t0, map[string]any{"question": strings.Repeat("é", 5000), "choices": choices, "request_id": "c1"}))
	r := f.get(t, "g1/clarify/c1")
	if len(r.Question) > maxQuestionBytes || len(r.Choices) != maxChoices || len(r.Choices[0]) > maxChoiceBytes || !strings.HasSuffix(r.Question, "…") {
		t.Fatalf("unbounded: question %d bytes, %d choices", len(r.Question), len(r.Choices))
	}
	f.in.Ingest(event("g1", "s1", wire.SudoRequest, t0, map[string]any{}))
	failed := 0
	for _, r := range f.in.Snapshot().Requests {
		if r.State == StateFailed && r.Kind == KindSudo {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("a sudo prompt without request id should fail visibly: %+v", f.in.Snapshot().Requests)
	}
	if err := f.in.AnswerText(context.Background(), "g1/clarify/c1", wire.NewSecret(make([]byte, MaxAnswerBytes+1)), "cli"); err == nil {
		t.Fatal("an oversized answer was accepted")
	}
}

// TestSecretNeverFormats: a wire.Secret prints, formats and marshals as
// [redacted] whatever the verb, and Wipe zeroes it.
func TestSecretNeverFormats(t *testing.T) {
	t.Parallel()
	b := []byte("hunter2-value")
	s := wire.NewSecret(b)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s, s, s), fmt.Sprintf("%v", struct{ S *wire.Secret }{s})} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "68756e74") {
			t.Fatalf("formatted secret: %s", out)
		}
	}
	j, _ := json.Marshal(map[string]any{"v": s})
	if strings.Contains(string(j), "hunter2") {
		t.Fatalf("marshalled secret: %s", j)
	}
	s.Wipe()
	if string(b) != strings.Repeat("\x00", len(b)) || s.Len() != 0 {
		t.Fatalf("not wiped: %q", b)
	}
}

// TestPromptAfterRestart: a prompt left open by the last run comes back
// withdrawn, not answerable (its value could not be kept, and the gateway
// asks anew), and its audit trail ends.
func TestPromptAfterRestart(t *testing.T) {
	t.Parallel()
	r := newRestartRig(t)
	in, _, stop := r.start()
	in.Ingest(promptEvent("g1", "s1", "secret", "x1", "", t0))
	key := in.Pending()[0].Key
	stop()
	in, _, stop = r.start()
	defer stop()
	got, ok := in.Get(key)
	if !ok || got.State != StateCancelled || got.Kind != KindSecret || got.State.Live() {
		t.Fatalf("restored prompt %+v", got)
	}
	var ee *EndedError
	if err := in.AnswerText(context.Background(), key, wire.NewSecret([]byte("v")), "cli"); !errors.As(err, &ee) {
		t.Fatalf("answer after restart: %v", err)
	}
	stop()
	es := r.entries()
	if last := es[len(es)-1]; last.Key != key || last.State.Live() {
		t.Fatalf("audit trail ends with %+v", last)
	}
}

// TestPromptCutAfterWriteIsUnknown: a clarify, sudo or secret answer that
// was written before the link dropped has an unknown outcome, like an
// approval's: no "try again", no second answer (a retried password would
// reach whatever asks next), and it ends "outcome unknown" at its deadline
// unless the gateway says more. The value is never kept for a retry.
func TestPromptCutAfterWriteIsUnknown(t *testing.T) {
	t.Parallel()
	for _, kind := range []Kind{KindClarify, KindSudo, KindSecret} {
		for _, form := range []string{"event", "srq"} {
			t.Run(fmt.Sprintf("%s/%s", kind, form), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, nil)
				srqID := ""
				if form == "srq" {
					srqID = "srq-1"
				}
				f.in.Ingest(promptEvent("g1", "s1", string(kind), "ab12cd34", srqID, t0))
				r := f.only(t)
				f.ans["g1"].set(0, fmt.Errorf("sending the %s answer failed: %w", kind, wire.ErrOutcomeUnknown), nil)
				value := "pw-Tr0ub4dor&3-" + string(kind)
				err := f.in.AnswerText(context.Background(), r.Key, wire.NewSecret([]byte(value)), "window")
				var ue *UnknownOutcomeError
				if !errors.As(err, &ue) || strings.Contains(err.Error(), "try again") || (kind.Masked() && strings.Contains(err.Error(), value)) {
					t.Fatalf("answer cut after the write: %v, want an UnknownOutcomeError without a retry invitation or the value", err)
				}
				if want := map[Kind]string{KindClarify: "your answer", KindSudo: "your password", KindSecret: "your secret"}[kind]; !strings.HasPrefix(err.Error(), want+" ") {
					t.Fatalf("the unknown outcome reads %q, want it to start %q", err, want)
				}
				got := f.get(t, r.Key)
				if got.State != StateSentUnknown || !got.State.Live() {
					t.Fatalf("after the cut: %s %+v", got.State, got.Outcome)
				}
				// No retry, whatever the surface or value.
				f.ans["g1"].set(1, nil, nil)
				var ae *AnsweredError
				if err := f.in.AnswerText(context.Background(), r.Key, wire.NewSecret([]byte("again")), "cli"); !errors.As(err, &ae) || !ae.Unknown {
					t.Fatalf("retry after the cut: %v, want an AnsweredError (unknown)", err)
				}
				if n := len(f.ans["g1"].sent()); n != 1 {
					t.Fatalf("%d answers reached the gateway, want the one sent before the cut", n)
				}
				// Nothing settles it: at the deadline it ends unknown.
				f.clk.Advance(promptTimeouts[kind] + time.Second)
				f.in.Ingest(promptEvent("g2", "s9", "clarify", "zz", "", f.clk.Now())) // any activity runs the sweep
				got = f.get(t, r.Key)
				if got.State != StateOutcomeUnknown || !strings.Contains(got.Outcome.Detail, "unknown") {
					t.Fatalf("at the deadline: %s %q, want outcome unknown", got.State, got.Outcome.Detail)
				}
				entries, _ := f.store.List(Filter{Key: r.Key})
				b, _ := json.Marshal(entries)
				if strings.Contains(string(b), value) {
					t.Fatalf("the audit log holds the answer's value: %s", b)
				}
				if !strings.Contains(string(b), string(StateSentUnknown)) || !strings.Contains(string(b), string(StateOutcomeUnknown)) {
					t.Fatalf("audit log lacks the unknown states: %s", b)
				}
			})
		}
	}
}

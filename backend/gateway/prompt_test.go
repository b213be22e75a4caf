package gateway

import (
	"fmt"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"

	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestPromptsBothDialects runs the stub agent's clarify, sudo and secret
// prompts against both dialects: the client reports each with its typed
// payload and answers it in the form the gateway asked.
func TestPromptsBothDialects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, text, value, reply string
		wantEvent, wantSRQ       string
	}{
		{"clarify", "clarify: Proceed?", "yes", "clarify answer: 'yes'", wire.ClarifyRequest, wire.ClarifyServerRequest},
		{"sudo", "sudo: apt-get install jq", "hunter2-pw", "sudo: value received", wire.SudoRequest, wire.SudoServerRequest},
		{"secret", "secret: OPENWEATHER_API_KEY", "s3cr3t-value", "secret: value received", wire.SecretRequest, wire.SecretServerRequest},
	}
	for _, d := range dialects {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%s", d, tc.kind), func(t *testing.T) {
				t.Parallel()
				srv := hermestest.NewServer(hermestest.Options{Dialect: d})
				defer srv.Close()
				h := start(t, srv, nil)
				h.rec.waitState(t, source.StateConnected)
				if d == hermestest.Modern {
					h.rec.waitFor(t, "capabilities", func(_ []wire.Event, sts []source.Status) bool {
						return len(sts) > 0 && sts[len(sts)-1].Features.Capabilities
					})
				}
				ref, err := h.client.CreateSession(ctxT(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.client.Call(ctxT(t), "prompt.submit", map[string]any{"session_id": ref.ID, "text": tc.text}, nil); err != nil {
					t.Fatal(err)
				}
				want := tc.wantEvent
				if d == hermestest.Modern {
					want = tc.wantSRQ
				}
				ev := h.rec.waitKind(t, want, 1)[0]
				if ev.Session != ref.ID {
					t.Fatalf("prompt for session %q, want %q", ev.Session, ref.ID)
				}
				pa := wire.PromptAnswer{Kind: tc.kind, SessionID: ev.Session, ServerRequest: d == hermestest.Modern, Value: wire.NewSecret([]byte(tc.value))}
				switch p := ev.Data.(type) {
				case *wire.ClarifyPayload:
					pa.RequestID = p.RequestID
					if d == hermestest.Modern {
						if len(p.Questions) != 1 || p.Questions[0].Question != "Proceed?" {
							t.Fatalf("clarify questions %+v", p.Questions)
						}
						pa.QuestionID = p.Questions[0].QID
					} else if p.Question != "Proceed?" || len(p.Choices) != 2 {
						t.Fatalf("clarify payload %+v", p)
					}
				case *wire.SudoPayload:
					pa.RequestID = p.RequestID
				case *wire.SecretPayload:
					pa.RequestID = p.RequestID
					if p.EnvVar != "OPENWEATHER_API_KEY" {
						t.Fatalf("secret payload %+v", p)
					}
				default:
					t.Fatalf("no typed payload: %T", ev.Data)
				}
				if d == hermestest.Modern {
					pa.RequestID = ev.RequestID
				}
				ok, err := h.client.RespondPrompt(ctxT(t), pa)
				if err != nil || !ok {
					t.Fatalf("RespondPrompt = %v, %v", ok, err)
				}
				done := h.rec.waitKind(t, wire.MessageComplete, 1)
				if cp := done[0].Data.(*wire.CompletePayload); cp.Text != tc.reply {
					t.Fatalf("reply %q, want %q", cp.Text, tc.reply)
				}
				got := srv.PromptAnswers()
				if len(got) != 1 || got[0].Value != tc.value || got[0].Kind != tc.kind || !got[0].Pending {
					t.Fatalf("gateway got %+v", got)
				}
				// A second answer finds nothing pending.
				ok, err = h.client.RespondPrompt(ctxT(t), pa)
				if d == hermestest.Legacy && (err != nil || ok) {
					t.Fatalf("second answer = %v, %v; want not pending", ok, err)
				}
			})
		}
	}
}

// TestPromptExpiryAndElsewhere: a prompt that times out is withdrawn
// (sudo.expire in 0.18.2, request.cancel{timeout} on newer gateways), and
// one answered by another client leaves Herald's answer without effect.
func TestPromptExpiryAndElsewhere(t *testing.T) {
	t.Parallel()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			sclk := clock.NewFake(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
			srv := hermestest.NewServer(hermestest.Options{Dialect: d, Clock: sclk})
			defer srv.Close()
			h := start(t, srv, nil)
			h.rec.waitState(t, source.StateConnected)
			if d == hermestest.Modern {
				h.rec.waitFor(t, "capabilities", func(_ []wire.Event, sts []source.Status) bool {
					return len(sts) > 0 && sts[len(sts)-1].Features.Capabilities
				})
			}
			ref, err := h.client.CreateSession(ctxT(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			id, done, err := srv.RequestPrompt(ref.ID, hermestest.PromptSpec{Kind: hermestest.PromptSudo, Command: "sudo true"})
			if err != nil {
				t.Fatal(err)
			}
			sclk.BlockUntil(1)
			sclk.Advance(120 * time.Second)
			if r := <-done; r.Ended != "timeout" || r.Value != "" {
				t.Fatalf("prompt ended %+v", r)
			}
			if d == hermestest.Legacy {
				ev := h.rec.waitKind(t, wire.SudoExpire, 1)[0]
				if p, ok := ev.Data.(*wire.PromptExpirePayload); !ok || p.RequestID != id {
					t.Fatalf("expire %+v", ev.Data)
				}
			} else {
				ev := h.rec.waitKind(t, wire.RequestCancel, 1)[0]
				if p, ok := ev.Data.(*wire.CancelPayload); !ok || p.ID != id || p.Reason != "timeout" || p.Method != "sudo" {
					t.Fatalf("cancel %+v", ev.Data)
				}
			}

			id2, _, err := srv.RequestPrompt(ref.ID, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Question: "Which?", Choices: []string{"a", "b"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.AnswerPromptElsewhere(id2, "b"); err != nil {
				t.Fatal(err)
			}
			if d == hermestest.Legacy {
				ok, err := h.client.RespondPrompt(ctxT(t), wire.PromptAnswer{Kind: "clarify", RequestID: id2, Value: wire.NewSecret([]byte("a"))})
				if err != nil || ok {
					t.Fatalf("answer after elsewhere = %v, %v; want not pending", ok, err)
				}
			} else {
				h.rec.waitFor(t, "resolved cancel", func(evs []wire.Event, _ []source.Status) bool {
					for _, e := range evs {
						if cp, ok := e.Data.(*wire.CancelPayload); ok && cp.ID == id2 && cp.Reason == "resolved" {
							return true
						}
					}
					return false
				})
			}
		})
	}
}

// TestPromptMultiQuestionClarify: a clarify server request with several
// questions is answered one question at a time with clarify.lock; the last
// lock resolves it.
func TestPromptMultiQuestionClarify(t *testing.T) {
	t.Parallel()
	srv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer srv.Close()
	h := start(t, srv, nil)
	h.rec.waitFor(t, "capabilities", func(_ []wire.Event, sts []source.Status) bool {
		return len(sts) > 0 && sts[len(sts)-1].Features.Capabilities
	})
	ref, err := h.client.CreateSession(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := srv.RequestPrompt(ref.ID, hermestest.PromptSpec{Kind: hermestest.PromptClarify, Questions: []hermestest.ClarifyQuestion{
		{QID: "q0", Question: "Env?", Choices: []string{"dev", "prod"}}, {QID: "q1", Question: "Why?"}}})
	if err != nil {
		t.Fatal(err)
	}
	ev := h.rec.waitKind(t, wire.ClarifyServerRequest, 1)[0]
	p := ev.Data.(*wire.ClarifyPayload)
	if len(p.Questions) != 2 {
		t.Fatalf("questions %+v", p.Questions)
	}
	for i, v := range []string{"dev", "testing"} {
		ok, err := h.client.RespondPrompt(ctxT(t), wire.PromptAnswer{Kind: "clarify", ServerRequest: true, Lock: true, RequestID: ev.RequestID, QuestionID: p.Questions[i].QID, Value: wire.NewSecret([]byte(v))})
		if err != nil || !ok {
			t.Fatalf("lock %d = %v, %v", i, ok, err)
		}
	}
	if r := <-done; r.Answers["q0"] != "dev" || r.Answers["q1"] != "testing" {
		t.Fatalf("answers %+v", r)
	}
}

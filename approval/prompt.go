package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-desktop/herald/backend/wire"
)

// Kind is what a request asks of the user. Approvals and the prompts that
// block a Hermes run (clarify, sudo, secret) share one inbox: the same
// life cycle, deadlines, first-answer-wins, withdrawal and audit log.
type Kind string

const (
	// KindApproval is a dangerous-command approval, answered with a choice.
	KindApproval Kind = "approval"
	// KindClarify is a question from the agent: one of Choices, or free
	// text (Inbox.Answer by choice, Inbox.AnswerText with text).
	KindClarify Kind = "clarify"
	// KindSudo asks for the sudo password of the machine Hermes runs on
	// (Inbox.AnswerText only, typed in the window or a terminal).
	KindSudo Kind = "sudo"
	// KindSecret asks for a secret value stored as EnvVar on the gateway
	// (Inbox.AnswerText only, typed in the window or a terminal).
	KindSecret Kind = "secret"
)

// IsPrompt reports whether the kind is a clarify, sudo or secret prompt.
func (k Kind) IsPrompt() bool { return k == KindClarify || k == KindSudo || k == KindSecret }

// Masked reports whether the answer is a password or secret: typed only
// into a masked field or a terminal with echo off, never shown, logged or
// stored.
func (k Kind) Masked() bool { return k == KindSudo || k == KindSecret }

// Default waits of Hermes' prompts (tui_gateway/server.py: _block's 300 s,
// 120 s for sudo); see backend/hermestest/PROMPTS.md.
var promptTimeouts = map[Kind]time.Duration{KindClarify: 300 * time.Second, KindSudo: 120 * time.Second, KindSecret: 300 * time.Second}

// Bounds on what a gateway may send in a prompt (longer text is cut, more
// choices dropped) and on a clarify answer.
const (
	maxQuestionBytes = 2048
	maxPromptBytes   = 1024
	maxEnvVarBytes   = 128
	maxChoices       = 10
	maxChoiceBytes   = 200
	maxQuestions     = 5
	// MaxAnswerBytes bounds a clarify answer, password or secret value.
	MaxAnswerBytes = 4096
)

// PromptAnswerer sends answers to clarify, sudo and secret prompts; the
// Answerer of a gateway that can ask them implements it too
// (*gateway.Client does).
type PromptAnswerer interface {
	// RespondPrompt sends the answer in the form the gateway asked and
	// reports whether the gateway took it (false: it no longer waited).
	RespondPrompt(ctx context.Context, a wire.PromptAnswer) (bool, error)
}

// ErrTypedOnly is returned when a password or secret is to be answered by
// choice, e.g. from a notification or the tray.
var ErrTypedOnly = errors.New("a password or secret can only be typed in Herald's window or in a terminal (herald answer ID); open the window to answer it")

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// arrivePromptLocked turns a clarify, sudo or secret prompt of either
// dialect into requests (one per question of a clarify server request).
func (in *Inbox) arrivePromptLocked(ev wire.Event, decodeErr error, now time.Time) {
	kind := Kind(wire.PromptKind(ev.Kind))
	base := Request{
		Kind: kind, Gateway: ev.Gateway, Session: ev.Session, StoredSession: ev.StoredSession,
		ReceivedAt: ev.ReceivedAt, Dialect: DialectEvent, Choices: []string{},
	}
	if base.ReceivedAt.IsZero() {
		base.ReceivedAt = now
	}
	base.ExpiresAt = base.ReceivedAt.Add(promptTimeouts[kind])
	base.Epoch = ev.Epoch
	in.titleLocked(&base)
	srq := !strings.HasSuffix(ev.Kind, ".request")
	if srq {
		base.Dialect, base.RequestID = DialectServerRequest, ev.RequestID
	}
	var reqs []Request
	why := ""
	switch p := ev.Data.(type) {
	case *wire.ClarifyPayload:
		if !srq {
			base.RequestID = p.RequestID
			r := base
			r.Question, r.Choices = cut(p.Question, maxQuestionBytes), boundChoices(p.Choices)
			reqs = append(reqs, r)
			break
		}
		qs := p.Questions
		if len(qs) > maxQuestions {
			qs = qs[:maxQuestions]
		}
		for _, q := range qs {
			r := base
			r.Question, r.Choices, r.QuestionID, r.Questions = cut(q.Question, maxQuestionBytes), boundChoices(q.Choices), cut(q.QID, maxChoiceBytes), len(qs)
			reqs = append(reqs, r)
		}
		if len(reqs) == 0 {
			why = "it asks no question"
		}
	case *wire.SudoPayload:
		if !srq {
			base.RequestID = p.RequestID
		}
		base.Command = cut(p.Command, maxQuestionBytes)
		reqs = append(reqs, base)
	case *wire.SecretPayload:
		if !srq {
			base.RequestID = p.RequestID
		}
		base.Prompt, base.EnvVar = cut(p.Prompt, maxPromptBytes), cut(p.EnvVar, maxEnvVarBytes)
		reqs = append(reqs, base)
	default:
		why = "it came without a payload"
		if decodeErr != nil {
			why = fmt.Sprintf("its payload could not be read: %v", decodeErr)
		}
	}
	if why == "" && base.RequestID == "" {
		why = "it has no request id"
	}
	if why == "" && base.Session == "" {
		why = "it names no session"
	}
	if why != "" {
		r := base
		r.Key = in.evKey(r.Gateway + "/" + string(kind) + "/bad")
		in.admitFailedLocked(&item{Request: r}, why, now)
		return
	}
	for _, r := range reqs {
		if srq {
			r.Key = in.srqKey(r.Gateway, r.RequestID)
			if r.Questions > 1 {
				r.Key += "/" + r.QuestionID
			}
		} else {
			r.Key = r.Gateway + "/" + string(kind) + "/" + r.RequestID
		}
		if old, dup := in.items[r.Key]; dup && old.Epoch != "" && r.Epoch != "" && old.Epoch != r.Epoch {
			// The gateway restarted: an id it uses again names a new question.
			in.endLocked(old, ending{StateCancelled, Outcome{Reason: CancelRequestCancel, Detail: "the gateway restarted (a new replay epoch), so this question is gone from it; a question it asks again is new"}}, now)
			r.Key += "@" + r.Epoch
		}
		if old, dup := in.items[r.Key]; dup {
			in.rearmRequestLocked(old, ev, now)
			continue
		}
		if over := in.overLimitLocked(r.Gateway, now); over != "" {
			in.refuseLocked(r, over, now) // a flood of prompts is bounded like approvals
			continue
		}
		in.admitLocked(&item{Request: r, toolSeen: true}, now)
	}
}

// boundChoices keeps at most maxChoices distinct, non-empty choices.
func boundChoices(cs []string) []string {
	out := []string{}
	for _, c := range cs {
		c = cut(c, maxChoiceBytes)
		if c == "" || slices.Contains(out, c) {
			continue
		}
		if out = append(out, c); len(out) == maxChoices {
			break
		}
	}
	return out
}

// expirePromptLocked applies clarify.expire, sudo.expire or secret.expire.
func (in *Inbox) expirePromptLocked(ev wire.Event, now time.Time) {
	p, ok := ev.Data.(*wire.PromptExpirePayload)
	if !ok || p.RequestID == "" {
		return
	}
	if it, ok := in.items[ev.Gateway+"/"+wire.PromptKind(ev.Kind)+"/"+p.RequestID]; ok {
		in.endLocked(it, ending{StateExpired, Outcome{Detail: "the gateway stopped waiting for an answer"}}, now)
	}
}

// srqItemsLocked returns the requests of server request id (several for a
// clarify with several questions).
// Only requests of the given replay epoch count (any, when either side
// has none): after a gateway restart an id may name a new request.
func (in *Inbox) srqItemsLocked(gateway, id, epoch string) []*item {
	var out []*item
	for _, it := range in.items {
		if epoch != "" && it.Epoch != "" && it.Epoch != epoch {
			continue
		}
		if it.Dialect == DialectServerRequest && it.Gateway == gateway && it.RequestID == id {
			out = append(out, it)
		}
	}
	return out
}

// answerPromptChoice answers a clarify prompt with one of its choices (the
// way a notification or the tray answers it).
func (in *Inbox) answerPromptChoice(ctx context.Context, r Request, choice, surface string) error {
	if r.Kind.Masked() {
		return ErrTypedOnly
	}
	if !r.Offers(choice) {
		if len(r.Choices) == 0 {
			return fmt.Errorf("this question has no choices to pick from; type your answer instead (herald answer %s TEXT)", r.Key)
		}
		return fmt.Errorf("%q is not one of this question's choices; choose one of: %s, or type your own answer", choice, strings.Join(r.Choices, ", "))
	}
	return in.answerPrompt(ctx, r.Key, wire.NewSecret([]byte(choice)), surface)
}

// AnswerText answers a clarify prompt with free text, or a sudo or secret
// prompt with the password or value, from surface. An empty value declines
// (Hermes then goes on without it). The inbox takes value over: it is sent
// only to the gateway that asked, never recorded (the audit log says
// "password provided" or "secret provided"), and wiped once sent, whatever
// the outcome. The first answer wins, as for approvals.
func (in *Inbox) AnswerText(ctx context.Context, key string, value *wire.Secret, surface string) error {
	defer value.Wipe()
	if r, ok := in.Get(key); ok && !r.Kind.IsPrompt() {
		return errors.New("this is a command approval: answer it with a choice (once, session, always or deny)")
	}
	if value.Len() > MaxAnswerBytes {
		return fmt.Errorf("the answer is too long (%d bytes; at most %d); nothing was sent", value.Len(), MaxAnswerBytes)
	}
	return in.answerPrompt(ctx, key, value, surface)
}

// outcomeText is what the audit log and every surface record of an answer:
// never a password or secret.
func outcomeText(k Kind, value *wire.Secret) string {
	switch {
	case value.Len() == 0:
		return "declined"
	case k == KindSudo:
		return "password provided"
	case k == KindSecret:
		return "secret provided"
	}
	return cut(string(value.Reveal()), maxChoiceBytes)
}

func (in *Inbox) answerPrompt(ctx context.Context, key string, value *wire.Secret, surface string) error {
	defer value.Wipe()
	if surface == "" {
		return errors.New("approval: AnswerText needs the name of the surface the user answered from")
	}
	var it *item
	var pa PromptAnswerer
	var err error
	var target Request
	in.do(func(now time.Time) {
		var cur *item
		if cur, err = in.waitingLocked(key); err != nil {
			return
		}
		ans, ok := in.answerers(cur.Gateway)
		if !ok {
			err = fmt.Errorf("%w (%s); the question is still waiting: reconnect the gateway, then answer again", ErrNoAnswerer, cur.Gateway)
			return
		}
		if pa, ok = ans.(PromptAnswerer); !ok {
			err = fmt.Errorf("Herald cannot answer this kind of question over its connection to %s; answer it in Hermes itself", cur.Gateway)
			return
		}
		it = cur
		in.toAnswering(it, outcomeText(it.Kind, value), surface, now)
		target = it.Request
	})
	if err != nil {
		return err
	}
	ok, serr := pa.RespondPrompt(ctx, wire.PromptAnswer{
		Kind: string(target.Kind), ServerRequest: target.Dialect == DialectServerRequest,
		SessionID: target.Session, RequestID: target.RequestID, QuestionID: target.QuestionID,
		Lock: target.Questions > 1, Value: value,
	})
	value.Wipe()
	resolved := 0
	if ok {
		resolved = 1
	}
	in.do(func(now time.Time) { err = in.settleLocked(it, resolved, serr, now) })
	return err
}

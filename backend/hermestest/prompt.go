package hermestest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// Prompt kinds the fake agent can ask, besides approvals (see PROMPTS.md).
const (
	PromptClarify = "clarify"
	PromptSudo    = "sudo"
	PromptSecret  = "secret"
)

// Hermes' default waits: clarify and secret use _block's 300 s, sudo 120 s
// (tui_gateway/server.py, _wire_callbacks).
var promptTimeouts = map[string]time.Duration{PromptClarify: 300 * time.Second, PromptSudo: 120 * time.Second, PromptSecret: 300 * time.Second}

// respondKey is the parameter of <kind>.respond that carries the answer.
var respondKey = map[string]string{PromptClarify: "answer", PromptSudo: "password", PromptSecret: "value"}

// ClarifyQuestion is one question of a Modern clarify server request.
type ClarifyQuestion struct {
	QID      string
	Question string
	Choices  []string
}

// PromptSpec describes a prompt the agent asks.
type PromptSpec struct {
	Kind string // PromptClarify, PromptSudo or PromptSecret
	// Question and Choices (nil: free text only) for clarify.
	Question string
	Choices  []string
	// Questions asks several clarify questions at once (Modern server
	// request only; answered per question with clarify.lock).
	Questions []ClarifyQuestion
	// Command is the (redacted) command a sudo prompt is for (Modern).
	Command string
	// EnvVar and Prompt for secret.
	EnvVar, Prompt string
	// Timeout overrides the kind's default wait.
	Timeout time.Duration
}

// PromptResult is how a prompt ended, for the agent.
type PromptResult struct {
	// Value is the answer ("" when declined or not answered); Answers
	// holds every question's answer of a multi-question clarify.
	Value   string
	Answers map[string]string
	// Ended is answered, timeout, interrupted or elsewhere.
	Ended string
}

// PromptAnswer is one answer to a prompt the gateway received. The fake
// keeps the value so tests can check it reached the gateway that asked
// (and nothing else).
type PromptAnswer struct {
	Kind       string
	Session    string
	RequestID  string // request_id (event form) or srq id
	QuestionID string // clarify.lock only
	Value      string
	Via        string // <kind>.respond, clarify.lock, response or elsewhere
	Pending    bool   // false: nothing was waiting any more
}

// fprompt is one prompt the agent is waiting on.
type fprompt struct {
	id            string // request_id of the event form, srq id of the server request
	kind          string
	session       string
	spec          PromptSpec
	serverRequest bool
	qids          []string
	locked        map[string]string
	waiter[PromptResult]
}

// eventPayload is the 0.18.2 <kind>.request payload.
func (p *fprompt) eventPayload() map[string]any {
	switch p.kind {
	case PromptClarify:
		var choices any // Hermes sends null for a free-text question
		if p.spec.Choices != nil {
			choices = p.spec.Choices
		}
		return map[string]any{"question": p.spec.Question, "choices": choices, "request_id": p.id}
	case PromptSecret:
		return map[string]any{"prompt": p.spec.Prompt, "env_var": p.spec.EnvVar, "request_id": p.id}
	}
	return map[string]any{"request_id": p.id}
}

// serverRequestFrame is the Modern server request (also an open_requests
// entry, with the answers locked so far).
func (p *fprompt) serverRequestFrame() map[string]any {
	params := map[string]any{"session_id": p.session}
	switch p.kind {
	case PromptClarify:
		qs := []any{}
		for _, q := range p.questions() {
			var choices any
			if q.Choices != nil {
				choices = q.Choices
			}
			qs = append(qs, map[string]any{"qid": q.QID, "question": q.Question, "choices": choices, "multi_select": false})
		}
		params["questions"] = qs
		if len(p.locked) > 0 {
			params["answers"] = p.locked
		}
	case PromptSudo:
		params["command"] = p.spec.Command
	case PromptSecret:
		params["env_var"], params["prompt"] = p.spec.EnvVar, p.spec.Prompt
	}
	id, _ := json.Marshal(p.id)
	return map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": p.kind, "params": params}
}

func (p *fprompt) questions() []ClarifyQuestion {
	if len(p.spec.Questions) > 0 {
		return p.spec.Questions
	}
	return []ClarifyQuestion{{QID: "q0", Question: p.spec.Question, Choices: p.spec.Choices}}
}

// RequestPrompt makes the agent of a session ask a clarify, sudo or secret
// prompt, in the dialect the gateway speaks: a <kind>.request event
// (Legacy, or a Modern client that did not accept server requests) or a
// server request (Modern). It returns the prompt's id (request_id or srq
// id) and a channel that receives how it ended. It does not block.
func (s *Server) RequestPrompt(sessionID string, spec PromptSpec) (string, <-chan PromptResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[sessionID]
	if fs == nil {
		return "", nil, fmt.Errorf("hermestest: no session %q", sessionID)
	}
	if _, ok := respondKey[spec.Kind]; !ok {
		return "", nil, fmt.Errorf("hermestest: unknown prompt kind %q", spec.Kind)
	}
	p := s.requestPromptLocked(fs, spec)
	return p.id, p.done, nil
}

func (s *Server) requestPromptLocked(fs *fsession, spec PromptSpec) *fprompt {
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = promptTimeouts[spec.Kind]
	}
	p := &fprompt{kind: spec.Kind, session: fs.live, spec: spec, locked: map[string]string{}, waiter: newWaiter[PromptResult]()}
	switch {
	case !s.opts.Dialect.serverRequests():
	case s.opts.Dialect == Requests:
		// 0.21.3+: always a server request; clients that cannot
		// answer it never see it (the capability gate).
		p.serverRequest = true
	case fs.transport == nil || fs.transport.serverRequests:
		p.serverRequest = true
	}
	if p.serverRequest {
		s.nextSRQ++
		p.id = fmt.Sprintf("srq-p%d", s.nextSRQ)
		if s.opts.Dialect == Requests {
			p.id = srqID()
		}
		for _, q := range p.questions() {
			p.qids = append(p.qids, q.QID)
		}
	} else {
		p.id = newID(8)
	}
	fs.prompts = append(fs.prompts, p)
	p.timer = s.clk.NewTimer(timeout)
	go func(t clock.Timer) {
		select {
		case <-t.C():
			s.mu.Lock()
			s.endPromptLocked(fs, p, PromptResult{Ended: "timeout"}, "timeout")
			s.mu.Unlock()
		case <-p.stopped:
		}
	}(p.timer)
	switch {
	case !p.serverRequest:
		s.emitLocked(fs, p.kind+".request", p.eventPayload())
	default:
		s.sendRequestLocked(fs, p.serverRequestFrame())
	}
	s.notifyLocked()
	return p
}

func (s *Server) removePromptLocked(fs *fsession, p *fprompt) {
	for i, o := range fs.prompts {
		if o == p {
			fs.prompts = append(fs.prompts[:i], fs.prompts[i+1:]...)
			return
		}
	}
}

// endPromptLocked ends a prompt without an answer from its client and
// withdraws it: <kind>.expire for the event form (timeout only, as
// Hermes' _block does), request.cancel for the server request.
func (s *Server) endPromptLocked(fs *fsession, p *fprompt, r PromptResult, reason string) {
	if p.finished {
		return
	}
	s.removePromptLocked(fs, p)
	if r.Answers == nil && p.serverRequest && len(p.locked) > 0 {
		r.Answers = copyMap(p.locked)
	}
	p.finish(r)
	switch {
	case p.serverRequest:
		s.emitLocked(fs, "request.cancel", map[string]any{"id": p.id, "method": p.kind, "reason": reason})
	case reason == "timeout":
		s.emitLocked(fs, p.kind+".expire", map[string]any{"request_id": p.id})
	}
	s.notifyLocked()
}

func (s *Server) answerPromptLocked(fs *fsession, p *fprompt, r PromptResult, a PromptAnswer) {
	s.removePromptLocked(fs, p)
	p.finish(r)
	a.Kind, a.Session, a.RequestID, a.Pending = p.kind, fs.live, p.id, true
	s.promptAnswers = append(s.promptAnswers, a)
	s.notifyLocked()
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// findPromptLocked finds an open prompt by id.
func (s *Server) findPromptLocked(id string) (*fsession, *fprompt) {
	for _, fs := range s.sessions {
		for _, p := range fs.prompts {
			if p.id == id {
				return fs, p
			}
		}
	}
	return nil, nil
}

// PromptAnswers returns every prompt answer received, in order.
func (s *Server) PromptAnswers() []PromptAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]PromptAnswer(nil), s.promptAnswers...)
}

// OpenPrompts lists the ids of prompts still waiting, oldest first.
func (s *Server) OpenPrompts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, fs := range s.sessions {
		for _, p := range fs.prompts {
			out = append(out, p.id)
		}
	}
	sort.Strings(out)
	return out
}

// AnswerPromptElsewhere answers an open prompt as another client would.
// A Modern server request is then withdrawn with request.cancel
// {reason: resolved}; the event form says nothing (0.18.2 has no such
// event), so Herald learns it only when its own answer finds nothing
// pending.
func (s *Server) AnswerPromptElsewhere(id, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs, p := s.findPromptLocked(id)
	if p == nil {
		return fmt.Errorf("hermestest: no open prompt %q", id)
	}
	s.answerPromptLocked(fs, p, PromptResult{Value: value, Ended: "elsewhere"}, PromptAnswer{Value: value, Via: "elsewhere"})
	if p.serverRequest {
		s.emitLocked(fs, "request.cancel", map[string]any{"id": p.id, "method": p.kind, "reason": "resolved"})
	}
	return nil
}

// interruptPromptsLocked releases a session's prompts on session.interrupt
// (Hermes' _clear_pending releases the event form with "" and no event;
// server requests are withdrawn with request.cancel {reason: interrupted}).
func (s *Server) interruptPromptsLocked(fs *fsession) {
	for _, p := range append([]*fprompt(nil), fs.prompts...) {
		s.endPromptLocked(fs, p, PromptResult{Ended: "interrupted"}, "interrupted")
	}
}

// promptMethodLocked serves <kind>.respond and clarify.lock; ok is false
// for any other method.
func (s *Server) promptMethodLocked(method string, p map[string]any) (result any, e *rpcErr, ok bool) {
	str := func(k string) string { v, _ := p[k].(string); return v }
	switch method {
	case "clarify.respond", "sudo.respond", "secret.respond":
		kind := method[:len(method)-len(".respond")]
		key := respondKey[kind]
		rid := str("request_id")
		fs, pr := s.findPromptLocked(rid)
		if pr == nil || pr.serverRequest {
			s.promptAnswers = append(s.promptAnswers, PromptAnswer{Kind: kind, RequestID: rid, Value: str(key), Via: method})
			s.notifyLocked()
			return nil, &rpcErr{4009, "no pending " + key + " request"}, true
		}
		// Hermes' _respond takes the answer under the method's key,
		// whatever kind the request was.
		s.answerPromptLocked(fs, pr, PromptResult{Value: str(key), Ended: "answered"}, PromptAnswer{Value: str(key), Via: method})
		return map[string]any{"status": "ok"}, nil, true
	case "clarify.lock":
		if !s.opts.Dialect.serverRequests() {
			return nil, nil, false
		}
		rid, qid := str("request_id"), str("question_id")
		if rid == "" || qid == "" {
			return nil, &rpcErr{4002, "request_id and question_id required"}, true
		}
		fs, pr := s.findPromptLocked(rid)
		if pr == nil || pr.kind != PromptClarify || !pr.serverRequest {
			s.promptAnswers = append(s.promptAnswers, PromptAnswer{Kind: PromptClarify, RequestID: rid, QuestionID: qid, Value: str("answer"), Via: method})
			return map[string]any{"status": "expired"}, nil, true
		}
		known := false
		for _, q := range pr.qids {
			known = known || q == qid
		}
		if !known {
			return nil, &rpcErr{4002, fmt.Sprintf("unknown question_id %q", qid)}, true
		}
		pr.locked[qid] = str("answer")
		s.promptAnswers = append(s.promptAnswers, PromptAnswer{Kind: PromptClarify, Session: fs.live, RequestID: rid, QuestionID: qid, Value: str("answer"), Via: method, Pending: true})
		remaining := []string{}
		for _, q := range pr.qids {
			if _, done := pr.locked[q]; !done {
				remaining = append(remaining, q)
			}
		}
		if len(remaining) == 0 {
			s.removePromptLocked(fs, pr)
			pr.finish(PromptResult{Answers: copyMap(pr.locked), Value: pr.locked[pr.qids[0]], Ended: "answered"})
		}
		s.notifyLocked()
		return map[string]any{"status": "ok", "remaining": remaining}, nil, true
	}
	return nil, nil, false
}

// promptAnsweredLocked handles a client response to a prompt server
// request; false if id is not an open prompt.
func (s *Server) promptAnsweredLocked(id string, f rpcFrame) bool {
	fs, p := s.findPromptLocked(id)
	if p == nil || !p.serverRequest {
		return false
	}
	if len(f.Error) > 0 {
		// An error response: the client cannot answer; the wait returns
		// empty (server_requests.send returns None).
		s.removePromptLocked(fs, p)
		p.finish(PromptResult{Ended: "withdrawn"})
		s.withdrawn++
		s.notifyLocked()
		return true
	}
	var r struct {
		Value   string            `json:"value"`
		Answers map[string]string `json:"answers"`
	}
	_ = json.Unmarshal(f.Result, &r)
	res := PromptResult{Value: r.Value, Ended: "answered"}
	a := PromptAnswer{Value: r.Value, Via: "response"}
	if p.kind == PromptClarify {
		answers := copyMap(p.locked)
		for k, v := range r.Answers {
			answers[k] = v
		}
		res.Answers, res.Value = answers, answers[p.qids[0]]
		a.Value = res.Value
		if len(p.qids) > 1 {
			b, _ := json.Marshal(answers)
			a.Value = string(b)
		}
	}
	s.answerPromptLocked(fs, p, res, a)
	if s.opts.Dialect.fanOut() && !s.opts.NoCancelAfterResponse {
		s.emitLocked(fs, "request.cancel", map[string]any{"id": p.id, "method": p.kind, "reason": "resolved"})
	}
	return true
}

// openPromptFramesLocked lists a session's open prompt server requests
// for open_requests.
func (s *Server) openPromptFramesLocked(fs *fsession) []any {
	var out []any
	for _, p := range fs.prompts {
		if p.serverRequest {
			out = append(out, p.serverRequestFrame())
		}
	}
	return out
}

// promptScript runs the stub agent's prompt commands ("clarify: Q",
// "sudo: CMD", "secret: ENV") and returns its reply; ok is false for other
// text, and reply is "" when the turn was stopped.
func (s *Server) promptScript(fs *fsession, text string, stop chan struct{}) (reply string, ok bool) {
	var spec PromptSpec
	switch {
	case len(text) > 8 && text[:8] == "clarify:":
		spec = PromptSpec{Kind: PromptClarify, Question: strings.TrimSpace(text[8:]), Choices: []string{"yes", "no"}}
	case len(text) > 5 && text[:5] == "sudo:":
		spec = PromptSpec{Kind: PromptSudo, Command: "sudo " + strings.TrimSpace(text[5:])}
	case len(text) > 7 && text[:7] == "secret:":
		env := strings.TrimSpace(text[7:])
		spec = PromptSpec{Kind: PromptSecret, EnvVar: env, Prompt: "Enter the value of " + env}
	default:
		return "", false
	}
	s.mu.Lock()
	p := s.requestPromptLocked(fs, spec)
	s.mu.Unlock()
	var r PromptResult
	select {
	case r = <-p.done:
	case <-stop:
		return "", true
	}
	switch {
	case spec.Kind == PromptClarify:
		return "clarify answer: '" + r.Value + "'", true // Python's repr, as the stub agent says it
	case r.Value == "":
		return spec.Kind + ": nothing provided (" + r.Ended + ")", true
	}
	// Never echo the value, like Hermes.
	return spec.Kind + ": value received", true
}

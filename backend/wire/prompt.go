package wire

import (
	"encoding/json"
	"fmt"
)

// Prompt kinds: questions other than command approvals that block a
// Hermes run until a person answers. See backend/hermestest/PROMPTS.md
// for the exact shapes of both dialects.
const (
	// ClarifyRequest is the 0.18.2 event {question, choices, request_id},
	// answered with clarify.respond {request_id, answer}.
	ClarifyRequest = "clarify.request"
	// SudoRequest is the 0.18.2 event {request_id}, answered with
	// sudo.respond {request_id, password}.
	SudoRequest = "sudo.request"
	// SecretRequest is the 0.18.2 event {prompt, env_var, request_id},
	// answered with secret.respond {request_id, value}.
	SecretRequest = "secret.request"

	// ClarifyExpire, SudoExpire and SecretExpire {request_id} say the
	// gateway stopped waiting (timeout, interrupt).
	ClarifyExpire = "clarify.expire"
	SudoExpire    = "sudo.expire"
	SecretExpire  = "secret.expire"

	// ClarifyServerRequest is the newer server request "clarify"
	// {session_id, questions:[{qid, question, choices, multi_select}]},
	// answered with a response {answers:{qid: text}}.
	ClarifyServerRequest = "clarify"
	// SudoServerRequest is the server request "sudo" {session_id,
	// command}, answered with {value}.
	SudoServerRequest = "sudo"
	// SecretServerRequest is the server request "secret" {session_id,
	// env_var, prompt, metadata}, answered with {value}.
	SecretServerRequest = "secret"
)

// PromptKind names a prompt's kind without its dialect: "clarify", "sudo"
// or "secret"; "" for any other event kind.
func PromptKind(kind string) string {
	switch kind {
	case ClarifyRequest, ClarifyExpire, ClarifyServerRequest:
		return "clarify"
	case SudoRequest, SudoExpire, SudoServerRequest:
		return "sudo"
	case SecretRequest, SecretExpire, SecretServerRequest:
		return "secret"
	}
	return ""
}

// IsPromptServerRequest reports whether method is a prompt server request
// Herald serves.
func IsPromptServerRequest(method string) bool {
	return method == ClarifyServerRequest || method == SudoServerRequest || method == SecretServerRequest
}

// IsPrompt reports whether the event asks a person for a clarify answer,
// a password or a secret, in either dialect.
func (e *Event) IsPrompt() bool {
	switch e.Kind {
	case ClarifyRequest, SudoRequest, SecretRequest, ClarifyServerRequest, SudoServerRequest, SecretServerRequest:
		return true
	}
	return false
}

// IsPromptExpire reports whether the event withdraws a 0.18.2 prompt.
func (e *Event) IsPromptExpire() bool {
	return e.Kind == ClarifyExpire || e.Kind == SudoExpire || e.Kind == SecretExpire
}

// ClarifyQuestion is one question of a clarify server request.
type ClarifyQuestion struct {
	QID         string   `json:"qid"`
	Question    string   `json:"question"`
	Choices     []string `json:"choices,omitempty"`
	MultiSelect bool     `json:"multi_select,omitempty"`
}

// ClarifyPayload is a clarify prompt in either form: the event form fills
// Question, Choices and RequestID; the server-request form fills
// SessionID and Questions (1-5).
type ClarifyPayload struct {
	RequestID string            `json:"request_id,omitempty"`
	SessionID string            `json:"session_id,omitempty"`
	Question  string            `json:"question,omitempty"`
	Choices   []string          `json:"choices,omitempty"`
	Questions []ClarifyQuestion `json:"questions,omitempty"`
}

// SudoPayload is a sudo password prompt. The event form carries only
// RequestID; the server-request form SessionID and the (server-redacted)
// Command.
type SudoPayload struct {
	RequestID string `json:"request_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Command   string `json:"command,omitempty"`
}

// SecretPayload asks for the value of an environment variable (a skill's
// API key, for instance).
type SecretPayload struct {
	RequestID string          `json:"request_id,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
	EnvVar    string          `json:"env_var"`
	Prompt    string          `json:"prompt"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
}

// PromptExpirePayload is clarify.expire, sudo.expire or secret.expire.
type PromptExpirePayload struct {
	RequestID string `json:"request_id"`
}

// Secret holds a password or secret value on its way to the gateway. It
// never prints, formats or marshals as its value (always "[redacted]"),
// so a stray log line or error cannot carry it; Reveal gives the bytes to
// the one place that sends them, and Wipe zeroes them once sent. Go
// cannot promise that no copy stays in memory (the JSON encoder makes
// one), but no copy is ever kept on purpose.
type Secret struct{ b []byte }

// NewSecret takes ownership of b (it is zeroed by Wipe).
func NewSecret(b []byte) *Secret { return &Secret{b: b} }

// Reveal returns the value's bytes; do not keep them.
func (s *Secret) Reveal() []byte {
	if s == nil {
		return nil
	}
	return s.b
}

// Len is the value's length in bytes.
func (s *Secret) Len() int {
	if s == nil {
		return 0
	}
	return len(s.b)
}

// Wipe zeroes the value.
func (s *Secret) Wipe() {
	if s == nil {
		return
	}
	for i := range s.b {
		s.b[i] = 0
	}
	s.b = nil
}

// String never shows the value.
func (s *Secret) String() string { return "[redacted]" }

// GoString never shows the value.
func (s *Secret) GoString() string { return "[redacted]" }

// Format never shows the value, whatever the verb.
func (s *Secret) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[redacted]") }

// MarshalJSON never shows the value.
func (s *Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// MarshalText never shows the value.
func (s *Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// PromptAnswer is an answer to a clarify, sudo or secret prompt.
type PromptAnswer struct {
	Kind string // "clarify", "sudo" or "secret"
	// ServerRequest: answer with a response frame to RequestID (an srq
	// id); otherwise with <kind>.respond {request_id}.
	ServerRequest bool
	SessionID     string
	RequestID     string
	// QuestionID is the clarify question's qid (server-request form);
	// Lock sends it with clarify.lock (a request with several questions).
	QuestionID string
	Lock       bool
	// Value is the answer: clarify text, password or secret value. An
	// empty value declines (Hermes treats "" as skipped).
	Value *Secret
}

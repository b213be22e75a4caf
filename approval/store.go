package approval

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// Entry is one audit log record: a request's arrival or a change of its
// state. It is evidence of what was asked and what ran, so the command is
// kept exactly as the gateway sent it (the log file is private to the
// user, mode 0600), next to a masked copy for display-only views; error
// text is scrubbed of credentials. The fields mirror Request and its
// Outcome.
type Entry struct {
	Seq           uint64     `json:"seq"`                      // assigned by the Store, increasing
	At            time.Time  `json:"at"`                       // when the change happened
	Kind          ChangeKind `json:"kind"`                     // arrived or updated
	Key           string     `json:"key"`                      // Request.Key
	Gateway       string     `json:"gateway"`                  // Request.Gateway
	Session       string     `json:"session,omitempty"`        // Request.Session
	StoredSession string     `json:"stored_session,omitempty"` // Request.StoredSession
	Dialect       Dialect    `json:"dialect,omitempty"`        // Request.Dialect
	Command       string     `json:"command,omitempty"`        // arrivals and decisions, exactly as sent
	// MaskedCommand is Redact(Command) when that differs (display-only
	// views; Redact never masks shell code).
	MaskedCommand string `json:"masked_command,omitempty"`
	Description   string `json:"description,omitempty"` // arrivals and decisions
	// Hidden is HiddenText(Command) when Hermes masked part of the
	// command before Herald saw it: Command is then not what ran, and a
	// decision to approve it was made without seeing that part.
	Hidden    string       `json:"hidden,omitempty"`
	State     State        `json:"state"`               // the state after the change
	Uncertain bool         `json:"uncertain,omitempty"` // Request.Uncertain
	Choice    string       `json:"choice,omitempty"`    // Outcome.Choice
	Surface   string       `json:"surface,omitempty"`   // Outcome.Surface
	Reason    CancelReason `json:"reason,omitempty"`    // Outcome.Reason
	Detail    string       `json:"detail,omitempty"`    // Outcome.Detail, scrubbed
	Error     string       `json:"error,omitempty"`     // failure or last send error, scrubbed
	// RequestKind is Request.Kind ("" in entries written before prompts
	// existed: an approval). For sudo and secret, Choice is only "password
	// provided", "secret provided" or "declined": the value is never
	// logged.
	RequestKind Kind `json:"request_kind,omitempty"`
	// Question is what a prompt asked (arrivals only): the clarify
	// question with its choices, or the secret's env var and prompt.
	Question string `json:"question,omitempty"`
	// The request's guards, so that a restart never widens what Herald
	// accepts (see restoreLocked): the choices accepted at the time, the
	// ids an answer names, the replay epoch, and why only deny is
	// accepted. Guards is GuardsVersion in entries that carry them; an
	// entry without them is restored deny-only.
	Guards       int      `json:"guards,omitempty"`
	Choices      []string `json:"choices,omitempty"`
	RequestID    string   `json:"request_id,omitempty"`
	QueueID      string   `json:"queue_id,omitempty"`
	ByOrder      bool     `json:"by_order,omitempty"`
	Epoch        string   `json:"epoch,omitempty"`
	Truncated    bool     `json:"truncated,omitempty"`
	CommandBytes int      `json:"command_bytes,omitempty"`
	Conflict     string   `json:"conflict,omitempty"`
	Unbound      string   `json:"unbound,omitempty"`
	// SessionTitle is Request.SessionTitle: the session's title when the
	// request arrived ("" in entries written before Herald recorded it),
	// which names the session in the history once it is gone.
	SessionTitle string `json:"session_title,omitempty"`
}

// GuardsVersion marks entries that record a request's guards.
const GuardsVersion = 1

// Filter selects entries for List. Zero fields match everything.
type Filter struct {
	Key     string    // one request
	Gateway string    // one gateway
	Since   time.Time // entries at or after
	// Limit keeps only the newest Limit matches (0: all).
	Limit int
}

func (f Filter) match(e Entry) bool {
	return (f.Key == "" || e.Key == f.Key) && (f.Gateway == "" || e.Gateway == f.Gateway) && !e.At.Before(f.Since)
}

// Store is the durable audit log.
type Store interface {
	// Record appends an entry (sanitized again on the way in).
	Record(Entry) error
	// List returns matching entries, oldest first.
	List(Filter) ([]Entry, error)
	// Prune deletes entries older than before, oldest first.
	Prune(before time.Time) error
	// Close releases the store.
	Close() error
}

// entryFor builds the audit entry for a change.
func entryFor(c Change) Entry {
	r := c.Request
	e := Entry{
		At: c.At, Kind: c.Kind, Key: r.Key, Gateway: r.Gateway, Session: r.Session, StoredSession: r.StoredSession,
		Dialect: r.Dialect, State: r.State, Uncertain: r.Uncertain, Choice: r.Outcome.Choice, Surface: r.Outcome.Surface,
		Reason: r.Outcome.Reason, Detail: r.Outcome.Detail, Error: firstOf(r.Outcome.Error, r.LastError),
		Guards: GuardsVersion, Choices: r.Choices, RequestID: r.RequestID, QueueID: r.QueueID, ByOrder: r.ByOrder, Epoch: r.Epoch,
		Truncated: r.Truncated, CommandBytes: r.CommandBytes, Conflict: r.Conflict, Unbound: r.Unbound,
		SessionTitle: r.SessionTitle,
	}
	// Arrivals carry the command, and so do decisions: the bounded log
	// keeps decisions longest, and each must say what was decided.
	if c.Kind == ChangeArrived || c.Kind == ChangeRefused || tierOf(e) == tierDecision {
		e.Command, e.Description, e.Hidden = r.Command, r.Description, r.Hidden()
	}
	if r.Kind.IsPrompt() {
		e.Choices = nil // a clarify's choices are in Question
		e.RequestKind = r.Kind
		if c.Kind == ChangeArrived {
			e.Question = promptQuestion(r)
		}
	}
	return e
}

// promptQuestion is a prompt's question for the audit log.
func promptQuestion(r Request) string {
	switch r.Kind {
	case KindClarify:
		if len(r.Choices) > 0 {
			return r.Question + " [" + strings.Join(r.Choices, " | ") + "]"
		}
		return r.Question
	case KindSecret:
		return r.EnvVar + ": " + r.Prompt
	}
	return "sudo password"
}

// DisplayCommand is the command as it ran, shown as Visible.
func (e Entry) DisplayCommand() string { return VisibleCommand(e.Command) }

// sanitized masks what could carry a secret, keeping the raw command.
func (e Entry) sanitized() Entry {
	e.MaskedCommand = ""
	if m := Redact(e.Command); m != e.Command {
		e.MaskedCommand = m
	}
	e.Description = Redact(e.Description)
	e.Detail, e.Error = scrub(e.Detail), scrub(e.Error)
	e.Question, e.Choice = Redact(e.Question), Redact(e.Choice)
	e.Choices = append([]string(nil), e.Choices...)
	return e
}

// MemoryStore is a Store in memory, for tests and for running without a
// history file.
type MemoryStore struct {
	mu      sync.Mutex
	seq     uint64
	entries []Entry
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Record appends e.
func (m *MemoryStore) Record(e Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	e = e.sanitized()
	e.Seq = m.seq
	m.entries = append(m.entries, e)
	return nil
}

// List returns the matching entries, oldest first.
func (m *MemoryStore) List(f Filter) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Entry
	for i := len(m.entries) - 1; i >= 0 && (f.Limit <= 0 || len(out) < f.Limit); i-- {
		if f.match(m.entries[i]) {
			out = append(out, m.entries[i])
		}
	}
	slices.Reverse(out)
	return out, nil
}

// Prune drops entries older than before from the front.
func (m *MemoryStore) Prune(before time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := 0
	for i < len(m.entries) && m.entries[i].At.Before(before) {
		i++
	}
	m.entries = append([]Entry(nil), m.entries[i:]...)
	return nil
}

// Close does nothing.
func (m *MemoryStore) Close() error { return nil }

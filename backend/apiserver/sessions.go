package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Stored sessions (/api/sessions).
//
// Hermes' API server also serves the sessions of its state.db: GET
// /api/sessions lists them (most recently active first, limit at most
// 200, offset, has_more), GET /api/sessions/{id} reads one and GET
// /api/sessions/{id}/messages its messages; POST /api/sessions creates an
// empty one. Every call takes the same bearer key as /v1/runs. Sources:
// gateway/platforms/api_server.py _handle_list_sessions,
// _handle_create_session, _handle_get_session, _handle_session_messages of
// the 0.18.2 and 0.19.0 archives (the same code), and the real servers
// (../shared/hermes-peer). A turn sent to one is sessionturn.go.

// MaxListedSessions bounds one listing (the server's own maximum page).
const MaxListedSessions = 200

// StoredSession is one Hermes session as the API server describes it.
type StoredSession struct {
	// ID is the session id (what a prompt continues).
	ID string `json:"id"`
	// Title is the session's title, when it has one.
	Title string `json:"title,omitempty"`
	// Preview is the first user message (60 characters), listings only.
	Preview string `json:"preview,omitempty"`
	// Source is where it was started ("cli", "api_server", "tui", ...).
	Source string `json:"source,omitempty"`
	// MessageCount counts its stored messages.
	MessageCount int `json:"message_count"`
	// StartedAt and LastActive are the server's times (LastActive: of its
	// last message, listings only; zero when unknown).
	StartedAt  time.Time `json:"started_at,omitzero"`
	LastActive time.Time `json:"last_active,omitzero"`
	// Ended is set once the session was ended (EndReason says why, e.g.
	// "branched").
	Ended     bool   `json:"ended,omitempty"`
	EndReason string `json:"end_reason,omitempty"`
}

// wireSession is a session as the server sends it.
type wireSession struct {
	ID           string   `json:"id"`
	Title        *string  `json:"title"`
	Preview      *string  `json:"preview"`
	Source       *string  `json:"source"`
	MessageCount *int     `json:"message_count"`
	StartedAt    *float64 `json:"started_at"`
	LastActive   *float64 `json:"last_active"`
	EndedAt      *float64 `json:"ended_at"`
	EndReason    *string  `json:"end_reason"`
}

func (w wireSession) session() StoredSession {
	s := StoredSession{ID: w.ID, Title: deref(w.Title), Preview: deref(w.Preview), Source: deref(w.Source),
		StartedAt: unixTime(w.StartedAt), LastActive: unixTime(w.LastActive), EndReason: deref(w.EndReason)}
	if w.MessageCount != nil && *w.MessageCount > 0 {
		s.MessageCount = *w.MessageCount
	}
	s.Ended = w.EndedAt != nil
	return s
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// unixTime reads a server time in Unix seconds (zero for none or nonsense).
func unixTime(f *float64) time.Time {
	if f == nil || *f <= 0 || math.IsNaN(*f) || *f > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(*f)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// SessionPage is one listing of stored sessions.
type SessionPage struct {
	Sessions []StoredSession `json:"sessions"`
	// More: the server has more sessions past this page.
	More bool `json:"more,omitempty"`
}

// ErrNoSessions matches the error of a server that serves no sessions
// (an API server older than the session resources, or not Hermes).
var ErrNoSessions = errors.New("this API server does not serve sessions")

// ErrNoSuchSession matches a 404 session_not_found.
var ErrNoSuchSession = errors.New("the API server has no such session")

// sessionErr says what a refused session call means.
func sessionErr(id string, err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		return err
	}
	if ae.Code == "session_not_found" {
		return &sessionError{err: err, is: ErrNoSuchSession, msg: fmt.Sprintf("the API server has no session %q: it was deleted, or the id is wrong (list them with `herald sessions`)", id)}
	}
	return &sessionError{err: err, is: ErrNoSessions, msg: "this API server does not serve sessions (GET /api/sessions is not there): update Hermes to continue sessions from Herald; new runs still work"}
}

type sessionError struct {
	err, is error
	msg     string
}

func (e *sessionError) Error() string        { return e.msg }
func (e *sessionError) Unwrap() error        { return e.err }
func (e *sessionError) Is(target error) bool { return target == e.is }

// ListSessions lists the server's stored sessions, the most recently
// active first: at most limit (at most MaxListedSessions) from offset.
func (c *Client) ListSessions(ctx context.Context, limit, offset int) (SessionPage, error) {
	limit = max(1, min(limit, MaxListedSessions))
	q := url.Values{"limit": {strconv.Itoa(limit)}, "offset": {strconv.Itoa(max(0, offset))}}
	var r struct {
		Data    []wireSession `json:"data"`
		HasMore bool          `json:"has_more"`
	}
	if _, err := c.call(ctx, http.MethodGet, "/api/sessions?"+q.Encode(), nil, &r, nil, retryAmbiguous); err != nil {
		return SessionPage{}, sessionErr("", err)
	}
	p := SessionPage{Sessions: make([]StoredSession, 0, min(len(r.Data), limit)), More: r.HasMore}
	for _, w := range r.Data {
		if w.ID == "" || len(p.Sessions) >= limit {
			continue
		}
		p.Sessions = append(p.Sessions, w.session())
	}
	return p, nil
}

func sessionPath(id, suffix string) string {
	return "/api/sessions/" + url.PathEscape(id) + suffix
}

// GetSession reads one stored session.
func (c *Client) GetSession(ctx context.Context, id string) (StoredSession, error) {
	var r struct {
		Session wireSession `json:"session"`
	}
	if _, err := c.call(ctx, http.MethodGet, sessionPath(id, ""), nil, &r, nil, retryAmbiguous); err != nil {
		return StoredSession{}, sessionErr(id, err)
	}
	if r.Session.ID == "" {
		r.Session.ID = id
	}
	return r.Session.session(), nil
}

// CreateSession creates an empty stored session (POST /api/sessions),
// titled when title is not empty. It is not retried once sent: a retry
// could create two.
func (c *Client) CreateSession(ctx context.Context, title string) (StoredSession, error) {
	body := map[string]any{}
	if t := strings.TrimSpace(title); t != "" {
		body["title"] = t
	}
	var r struct {
		Session wireSession `json:"session"`
	}
	if _, err := c.call(ctx, http.MethodPost, "/api/sessions", body, &r, nil, retryUnsent); err != nil {
		return StoredSession{}, fmt.Errorf("creating a session failed: %w", sessionErr("", err))
	}
	if r.Session.ID == "" {
		return StoredSession{}, errors.New("the API server created a session but named none; is it a Hermes API server?")
	}
	return r.Session.session(), nil
}

// SessionMessage is one stored message of a session.
type SessionMessage struct {
	Role    string    `json:"role"`
	Content string    `json:"content"`
	At      time.Time `json:"at,omitzero"`
}

// SessionMessages reads a session's stored messages (text content only;
// multimodal parts are left out).
func (c *Client) SessionMessages(ctx context.Context, id string) ([]SessionMessage, error) {
	var r struct {
		Data []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Timestamp *float64        `json:"timestamp"`
		} `json:"data"`
	}
	if _, err := c.call(ctx, http.MethodGet, sessionPath(id, "/messages"), nil, &r, nil, retryAmbiguous); err != nil {
		return nil, sessionErr(id, err)
	}
	out := make([]SessionMessage, 0, len(r.Data))
	for _, m := range r.Data {
		out = append(out, SessionMessage{Role: m.Role, Content: jsonString(m.Content), At: unixTime(m.Timestamp)})
	}
	return out, nil
}

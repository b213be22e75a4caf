package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/herald-desktop/herald/backend/source"
)

// MaxPromptBytes bounds a quick prompt.
const MaxPromptBytes = 32 << 10

// AskRequest starts a prompt from a surface (the window's quick prompt,
// `herald ask`).
type AskRequest struct {
	// Gateway names the gateway or API server; empty picks the only one.
	Gateway string `json:"gateway,omitempty"`
	// Session is the session to prompt (live or stored id); empty starts
	// a new one.
	Session string `json:"session,omitempty"`
	Text    string `json:"text"`
}

// AskResult is what the gateway answered.
type AskResult struct {
	Gateway   string `json:"gateway"`
	Transport string `json:"transport"`
	// Session is the live session id (ws) or the run id (api).
	Session       string `json:"session"`
	StoredSession string `json:"stored_session,omitempty"`
	NewSession    bool   `json:"new_session,omitempty"`
	// Status is the gateway's answer: streaming or queued (ws), started
	// (api).
	Status string `json:"status"`
	// Note is a caveat for the user (single-consumer gateways).
	Note string `json:"note,omitempty"`
	// Name is the session's or run's one name (SessionNames): a new one
	// is named by its first prompt.
	Name string `json:"name,omitempty"`
}

// Ask submits a prompt to a followed session, a stored session (followed
// first) or a new session. On a WebSocket gateway it is prompt.submit (a
// new session is session.create first); on an API server it starts a run.
func (s *Service) Ask(ctx context.Context, req AskRequest) (AskResult, error) {
	text := strings.TrimSpace(req.Text)
	switch {
	case text == "":
		return AskResult{}, errors.New("the prompt is empty: type what the agent should do")
	case len(text) > MaxPromptBytes:
		return AskResult{}, fmt.Errorf("the prompt is %d bytes; Herald sends at most %d: shorten it", len(text), MaxPromptBytes)
	case !utf8.ValidString(text):
		return AskResult{}, errors.New("the prompt is not valid UTF-8 text")
	}
	gw, err := s.pickGateway(req.Gateway)
	if err != nil {
		return AskResult{}, err
	}
	src, _ := s.Source(gw)
	a, ok := src.(source.Asker)
	if !ok {
		return AskResult{}, fmt.Errorf("%s takes no prompts: send it on the Hermes host", gw)
	}
	r, err := a.Ask(ctx, strings.TrimSpace(req.Session), text)
	if err != nil {
		return AskResult{}, err
	}
	if _, runs := src.(source.RunStarter); runs || r.NewSession {
		s.nameRun(gw, r.Session, text) // a new session or run is named by its first prompt
	}
	return AskResult{Gateway: gw, Transport: string(src.Kind()), Session: r.Session, StoredSession: r.StoredSession, NewSession: r.NewSession, Status: r.Status, Note: r.Note,
		Name: s.SessionName(gw, r.Session, r.StoredSession)}, nil
}

// pickGateway returns name if configured, or the only gateway.
func (s *Service) pickGateway(name string) (string, error) {
	var names []string
	for _, src := range s.Sources() {
		names = append(names, src.Name())
	}
	if name != "" {
		if s.transport(name) == "" {
			return "", fmt.Errorf("no gateway or API server named %q is configured (have: %s)", name, strings.Join(names, ", "))
		}
		return name, nil
	}
	switch len(names) {
	case 0:
		return "", errors.New("no gateway is configured: add one first")
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("more than one gateway is configured (%s): name the one to use (on the command line: --gateway NAME)", strings.Join(names, ", "))
}

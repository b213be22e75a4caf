package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/herald-desktop/herald/backend/apiserver"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/wire"
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
	if c, ok := s.gatewayClient(gw); ok {
		return s.askWS(ctx, c, strings.TrimSpace(req.Session), text)
	}
	c, _ := s.apiClient(gw)
	run, err := c.StartRun(ctx, apiserver.RunRequest{Input: text, SessionID: strings.TrimSpace(req.Session)})
	if err != nil {
		return AskResult{}, fmt.Errorf("%v; check the server with `herald watch --api`, then try again", err)
	}
	s.nameRun(gw, run.ID, text)
	return AskResult{Gateway: gw, Transport: TransportAPI, Session: run.ID, StoredSession: req.Session, NewSession: req.Session == "", Status: run.Status}, nil
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
	return "", fmt.Errorf("more than one gateway is configured (%s): say which one", strings.Join(names, ", "))
}

func (s *Service) askWS(ctx context.Context, c *gateway.Client, session, text string) (AskResult, error) {
	res := AskResult{Gateway: c.Name(), Transport: TransportWS}
	switch live, stored, ok := s.followed(c, session); {
	case session == "":
		ref, err := c.CreateSession(ctx, nil)
		if err != nil {
			return res, askError(c.Name(), err)
		}
		res.Session, res.StoredSession, res.NewSession = ref.ID, ref.StoredID, true
	case ok:
		res.Session, res.StoredSession = live, stored
	default:
		// Follow the stored session first (session.resume), so its turn
		// shows up here.
		ref, err := c.AttachSession(ctx, session)
		if err != nil {
			return res, askError(c.Name(), err)
		}
		res.Session, res.StoredSession = ref.ID, ref.StoredID
	}
	var r struct {
		Status string `json:"status"`
	}
	if err := c.Call(ctx, "prompt.submit", map[string]any{"session_id": res.Session, "text": text}, &r); err != nil {
		return res, askError(c.Name(), err)
	}
	res.Status = r.Status
	if res.Status == "" {
		res.Status = "submitted"
	}
	switch {
	case res.NewSession || c.FanOut():
	case res.Status == "queued":
		// A busy session queues the text (0.19's "queued" reply); the
		// queued turn's events go to the client that submitted it.
		res.Note = "the session was busy: your text runs after the current turn, and its events come to Herald (this gateway sends each session's events to one client at a time, so other clients showing it stop receiving them)"
	default:
		res.Note = "this gateway sends each session's events to one client at a time: its live events now go to Herald only; other clients showing it stop receiving them until they resume it"
	}
	return res, nil
}

// followed finds a session Herald follows on c by live or stored id.
func (s *Service) followed(c *gateway.Client, id string) (live, stored string, ok bool) {
	if id == "" {
		return "", "", false
	}
	for _, r := range c.Sessions() {
		if r.ID == id || (r.StoredID != "" && r.StoredID == id) {
			return r.ID, r.StoredID, true
		}
	}
	return "", "", false
}

func askError(gw string, err error) error {
	var re *wire.RPCError
	switch {
	case errors.Is(err, gateway.ErrNotConnected):
		return fmt.Errorf("%s is not connected, so nothing was sent; Herald reconnects by itself: try again once it shows connected", gw)
	case errors.As(err, &re) && (re.Code == 4001 || re.Code == 4007):
		return fmt.Errorf("%s: %v; nothing was sent: check the session id (`herald watch` shows them)", gw, err)
	}
	return fmt.Errorf("%s: %v; the prompt may not have been sent: check the session before sending it again", gw, err)
}

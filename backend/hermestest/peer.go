package hermestest

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Peer is another client of the gateway (a browser dashboard, Hermes
// Desktop, a script) connected next to Herald. It is an in-process
// connection: its calls go through exactly the same method handlers as a
// WebSocket client's, so it moves a session's live events exactly as a
// real client would (see PROTOCOL.md: the last client to call
// session.resume or prompt.submit on a session is its only consumer), and
// the frames the gateway sends it are kept for the test to inspect.
type Peer struct {
	s *Server
	c *fconn

	mu     sync.Mutex
	frames []map[string]any
}

// NewPeer connects another client. It declares server-request support on
// Modern gateways (as Hermes Desktop does), so approvals reach it as
// "approval" server requests there.
func (s *Server) NewPeer() *Peer {
	p := &Peer{s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.c = &fconn{s: s, peer: p, serverRequests: s.opts.Dialect.serverRequests()}
	s.conns[p.c] = struct{}{}
	s.notifyLocked()
	return p
}

func (p *Peer) receive(b []byte) {
	var fr map[string]any
	if json.Unmarshal(b, &fr) != nil {
		return
	}
	p.mu.Lock()
	p.frames = append(p.frames, fr)
	p.mu.Unlock()
}

// Call sends one JSON-RPC request from this client and returns its result,
// or an error carrying the gateway's error code and message.
func (p *Peer) Call(method string, params map[string]any) (map[string]any, error) {
	raw, _ := json.Marshal(params)
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	if p.c.dead {
		return nil, fmt.Errorf("hermestest: peer is disconnected")
	}
	p.s.methods = append(p.s.methods, method)
	p.s.notifyLocked()
	res, rerr := p.s.callLocked(p.c, method, raw)
	if rerr != nil {
		return nil, &PeerError{Code: rerr.code, Message: rerr.msg}
	}
	b, _ := json.Marshal(res)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out, nil
}

// PeerError is a JSON-RPC error a peer's call got.
type PeerError struct {
	Code    int
	Message string
}

func (e *PeerError) Error() string { return fmt.Sprintf("gateway error %d: %s", e.Code, e.Message) }

// Create calls session.create and returns the live and stored ids. Like
// Hermes, the session has no stored row until its first prompt, so
// session.resume of it fails with 4007 until then.
func (p *Peer) Create() (live, stored string, err error) {
	r, err := p.Call("session.create", map[string]any{"cols": 100})
	if err != nil {
		return "", "", err
	}
	live, _ = r["session_id"].(string)
	stored, _ = r["stored_session_id"].(string)
	return live, stored, nil
}

// Submit calls prompt.submit: the turn starts and the session's live
// events now go to this peer only.
func (p *Peer) Submit(live, text string) error {
	_, err := p.Call("prompt.submit", map[string]any{"session_id": live, "text": text})
	return err
}

// Resume calls session.resume with a stored id: the session's live events
// now go to this peer only.
func (p *Peer) Resume(stored string) error {
	_, err := p.Call("session.resume", map[string]any{"session_id": stored})
	return err
}

// Respond calls approval.respond (FIFO per session, as 0.18.2) and
// returns how many approvals it resolved.
func (p *Peer) Respond(live, choice string) (int, error) {
	r, err := p.Call("approval.respond", map[string]any{"session_id": live, "choice": choice})
	if err != nil {
		return 0, err
	}
	n, _ := r["resolved"].(float64)
	return int(n), nil
}

// Close disconnects the peer; sessions it consumed are detached (their
// events are dropped until someone resumes them).
func (p *Peer) Close() {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	if !p.c.dead {
		p.c.dead = true
		p.c.detachLocked()
	}
}

// Frames returns every frame the gateway sent this peer, in order.
func (p *Peer) Frames() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.frames...)
}

// Events returns the types of the events this peer received for a session.
func (p *Peer) Events(live string) []string {
	var out []string
	for _, fr := range p.Frames() {
		params, _ := fr["params"].(map[string]any)
		if fr["method"] == "event" && params["session_id"] == live {
			out = append(out, params["type"].(string))
		}
		if fr["method"] == "approval" && params["session_id"] == live {
			out = append(out, "approval")
		}
	}
	return out
}

// Consumer reports which client receives a session's live events: "peer"
// for this peer, "other" for another connection, "" for nobody (detached:
// events are dropped).
func (p *Peer) Consumer(live string) string {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	fs := p.s.sessions[live]
	switch {
	case fs == nil || fs.transport == nil:
		return ""
	case fs.transport == p.c:
		return "peer"
	}
	for _, c := range fs.extra {
		if c == p.c {
			return "peer"
		}
	}
	return "other"
}

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// What a gateway can do is decided for each connection from what it says
// and answers, never from a version string (see
// backend/hermestest/PROTOCOL.md for the sources):
//
//   - gateway.ready's payload: replay_epoch (replay), capabilities and
//     protocol (listed as advertised), shared_session (the newest
//     shared-session wire, which sends every session to every attached
//     client);
//   - method probes, where -32601 means the method is absent:
//     client.capabilities (server requests), approval.pending and
//     request.answer (answering a request without having received it);
//   - result fields (open_requests in a resume, session.events.since).
//
// Fan-out (every attached client receives a session's events, so
// following a session takes nothing from anyone) is known when the
// gateway advertises shared_session or answers approval.pending or
// request.answer, all of which arrived after fan-out upstream. A
// gateway that shows none of these is treated as sending each session
// to one client at a time: on one that fans out after all (0.21.1 and
// 0.21.2 look exactly like 0.20.6 from outside), following still
// loses nothing, Herald only warns more than it needs to.

// readyInfo is what gateway.ready's payload says about the gateway.
type readyInfo struct {
	ReplayEpoch   string          `json:"replay_epoch"`
	Version       string          `json:"version"`
	Capabilities  json.RawMessage `json:"capabilities"`
	Protocol      json.RawMessage `json:"protocol"`
	SharedSession json.RawMessage `json:"shared_session"`
}

// advertised lists the capabilities gateway.ready names (a map of
// name → truthy, or a list of names), sorted, comma-separated.
func (r readyInfo) advertised() string {
	var names []string
	var m map[string]any
	var l []string
	switch {
	case json.Unmarshal(r.Capabilities, &m) == nil:
		for k, v := range m {
			if b, ok := v.(bool); ok && !b {
				continue
			}
			names = append(names, clip(k, 40))
		}
	case json.Unmarshal(r.Capabilities, &l) == nil:
		for _, k := range l {
			names = append(names, clip(k, 40))
		}
	}
	sort.Strings(names)
	if len(names) > 20 {
		names = names[:20]
	}
	return strings.Join(names, ",")
}

func (r readyInfo) protocol() int {
	var p struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(r.Protocol, &p) == nil && p.Version > 0 && p.Version < 1000 {
		return p.Version
	}
	return 0
}

func (r readyInfo) sharedSession() bool {
	var m map[string]any
	return json.Unmarshal(r.SharedSession, &m) == nil && m != nil
}

// connFeatures is what one connection found out; reset at every ready.
type connFeatures struct {
	approvalPending, requestAnswer tri
	shared                         bool
	protocol                       int
	advertised                     string
}

func (f connFeatures) fanOut() bool {
	return f.shared || f.approvalPending == yes || f.requestAnswer == yes
}

// fanOutEvidence names what showed fan-out, for the gateway details.
func (f connFeatures) fanOutEvidence() string {
	var why []string
	if f.shared {
		why = append(why, "gateway.ready has shared_session")
	}
	if f.approvalPending == yes {
		why = append(why, "approval.pending answered")
	}
	if f.requestAnswer == yes {
		why = append(why, "request.answer answered")
	}
	if len(why) == 0 {
		return "no sign of fan-out: no shared_session in gateway.ready, approval.pending and request.answer absent (-32601)"
	}
	return strings.Join(why, "; ")
}

// probe asks whether a method exists: anything but -32601 (an error for
// the empty params included) means it does.
func probe(ctx context.Context, cn *conn, method string, params map[string]any) tri {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := cn.call(cctx, method, params)
	var re *wire.RPCError
	switch {
	case err == nil:
		return yes
	case wire.IsMethodNotFound(err):
		return no
	case errors.As(err, &re):
		return yes
	}
	return unknown // the link failed: ask again on the next connection
}

// probeConn finds out, once per connection, how the gateway delivers
// sessions and takes answers.
func (c *Client) probeConn(ctx context.Context, cn *conn) {
	pending := probe(ctx, cn, "approval.pending", map[string]any{"session_id": ""})
	answer := probe(ctx, cn, "request.answer", map[string]any{})
	c.mu.Lock()
	c.cf.approvalPending, c.cf.requestAnswer = pending, answer
	c.mu.Unlock()
	c.publishFeatures()
}

// FanOut reports whether the gateway is known to send each session's
// events to every attached client.
func (c *Client) FanOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cf.fanOut()
}

// canRequestAnswer reports whether request.answer exists here.
func (c *Client) canRequestAnswer() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cf.requestAnswer == yes
}

// requestAnswer answers an open server request with request.answer
// {id, result}: false when the gateway says it is expired (another
// client answered first, or it ended).
func (c *Client) requestAnswer(ctx context.Context, id string, result any) (bool, error) {
	var r struct {
		Status string `json:"status"`
	}
	raw, err := c.srqID(id)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	if c.answering == nil {
		c.answering, c.held = map[string]bool{}, map[string]wire.Event{}
	}
	c.answering[id] = true
	c.mu.Unlock()
	reply, err := c.callRaw(ctx, "request.answer", map[string]any{"id": raw, "result": result})
	if err == nil {
		// Written and answered: ok (this answer won) or expired (it did
		// not); a reply Herald does not understand leaves it unknown.
		if derr := json.Unmarshal(reply, &r); derr != nil || (r.Status != "ok" && r.Status != "expired") {
			err = peer.AnswerOutcome(true, false, fmt.Errorf("the gateway's answer to request.answer was not understood (status %.40q)", r.Status))
		}
	}
	won := err == nil && r.Status == "ok"
	c.mu.Lock()
	delete(c.answering, id)
	held, wasHeld := c.held[id]
	delete(c.held, id)
	if wasHeld && !won {
		// Not (known to be) Herald's answer: the withdrawal stands.
		c.dispatchLocked(held)
	}
	if errors.Is(err, wire.ErrOutcomeUnknown) {
		// As for a response frame: if the gateway lists it as open again
		// after the reconnect, deliver it again (the answer did not land).
		delete(c.srqParams, id)
	}
	c.mu.Unlock()
	if err != nil {
		return false, err
	}
	c.closeSRQ(id)
	return won, nil
}

// publishFeatures puts both feature sets into the status.
func (c *Client) publishFeatures() {
	c.setStatus(func(s *source.Status) { s.Features = c.featureStatusLocked() })
}

// featureStatusLocked is called by setStatus's fn with c.mu held.
func (c *Client) featureStatusLocked() source.FeatureStatus {
	f, cf := c.feat, c.cf
	d := source.DeliveryOneClient
	if cf.fanOut() {
		d = source.DeliveryFanOut
	}
	return source.FeatureStatus{
		Ping: f.ping == yes, Capabilities: f.capabilities == yes, Replay: f.replay == yes, ServerRequests: f.serverRequests,
		Delivery: d, DeliveryText: d.Describe(), DeliveryEvidence: cf.fanOutEvidence(),
		ApprovalPending: cf.approvalPending == yes, RequestAnswer: cf.requestAnswer == yes,
		Advertised: cf.advertised, Protocol: cf.protocol, SharedSession: cf.shared,
	}
}

// Package gateway keeps a live, loss-free WebSocket push channel to one
// Hermes gateway (/api/ws, JSON-RPC 2.0): authentication, handshake,
// heartbeats, reconnect with backoff, session re-attachment and event replay.
//
// A Client runs until its context ends. It reports every gateway event, in
// order, through Config.OnEvent, and its connection state through Status and
// Config.OnStatus. It never answers an approval by itself: RespondApproval and
// RespondServerRequest are the only ways a choice reaches the gateway.
//
// It is transport "ws" of the contract in backend/source: Source (in
// driver.go) adapts a Client, with the capabilities SessionFollower,
// Asker, Stopper and LinkChecker, and the driver registered there opens
// and checks one. It imports backend/source, backend/wire and the other
// plain backend packages, never a sibling transport; nothing above
// backend/ imports it except the registration in backend/transports (and
// tests). Its fake server is backend/hermestest.
package gateway

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Timing of the channel.
const (
	// DialTimeout bounds the TCP+TLS+upgrade and the wait for gateway.ready.
	DialTimeout = 10 * time.Second
	// PingInterval is how long a link may be quiet before Herald asks the
	// gateway for a sign of life.
	PingInterval = 15 * time.Second
	// DeadAfter is how long without any traffic (data, pong or ping reply)
	// before the link is declared dead. The heartbeat timer is due at that
	// moment, so a dead link is noticed 40 s after the last thing heard.
	DeadAfter = 40 * time.Second
	// ProbeTimeout bounds the answer to a CheckLink probe.
	ProbeTimeout = 10 * time.Second
	// JumpThreshold is how far wall time may drift from running time
	// between two heartbeat wake-ups before Herald takes it for a sleep
	// (or a clock change) and redials at once.
	JumpThreshold = 10 * time.Second
	callTimeout   = 15 * time.Second
)

// Config describes one gateway and how to reach it.
type Config struct {
	// Name identifies the gateway in events and status (default: URL).
	Name string
	// URL is the gateway's base URL (http://host:9119, https://...) or the
	// full WebSocket URL (ws://host:9119/api/ws).
	URL string
	// Token is the loopback-mode session token (sent as ?token=).
	Token string
	// Username and Password are used in gated mode (password login).
	Username, Password string
	// Header is added to every HTTP request and the WebSocket upgrade.
	Header http.Header
	// RootCAs, when set, replaces the system roots for wss:// and https://.
	// TLS verification is always on.
	RootCAs *x509.CertPool
	// DialContext, when set, replaces net.Dialer (tests use it to put a
	// chaos proxy in the path).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Clock drives backoff, heartbeats and time stamps (default: real).
	Clock clock.Clock
	// Backoff tunes reconnect delays.
	Backoff source.Backoff
	// Rand returns uniform numbers in [0,1) for jitter (default math/rand).
	Rand func() float64
	// Logger receives diagnostics; secrets are never logged.
	Logger *slog.Logger
	// Queue bounds the events waiting for OnEvent (zero: the defaults).
	Queue source.QueueLimits

	// OnEvent receives every event in order, from one goroutine.
	OnEvent func(wire.Event)
	// OnStatus receives every status change, from the client's goroutines.
	// It must not block.
	OnStatus func(source.Status)
	// OnDiscovery receives every listing of the gateway's live sessions
	// (see discovery.go). It must not block.
	OnDiscovery func(source.Discovery)
	// DiscoveryInterval is how often the live sessions are listed
	// (default DiscoveryInterval; negative: never).
	DiscoveryInterval time.Duration
}

// Client is the push channel to one gateway.
type Client struct {
	cfg    Config
	name   string
	clk    clock.Clock
	log    *slog.Logger
	target target
	auth   *authState
	out    *source.EventQueue
	sup    *source.Supervisor
	// rearm makes the heartbeat recompute its next wake-up (a listing or
	// a quiet-session check became due sooner).
	rearm chan struct{}

	mu       sync.Mutex
	conn     *conn
	status   source.Status
	sessions map[string]*session // by live session id
	epoch    string
	hasEpoch bool
	feat     features
	// cf is what this connection found out (reset at every ready).
	cf connFeatures
	// answering holds the ids Herald is answering with request.answer,
	// and held the request.cancel that arrived for one meanwhile: the
	// gateway withdraws a request from every client when an answer
	// settles it, Herald's own included, so a cancel "resolved" that
	// overtakes the answer's reply is Herald's own answer.
	answering map[string]bool
	held      map[string]wire.Event
	// openSRQ maps approval server requests delivered and not yet
	// answered or cancelled to their session.
	openSRQ map[string]string
	// srqParams holds a digest of the params of each open server request
	// (paramsDigest): one listed again with other params under the same
	// id is delivered (the inbox flags the conflict), never dropped as a
	// duplicate.
	srqParams map[string]string
	// srqCapped: MaxOpenServerRequests was reached (logged once per
	// episode).
	srqCapped bool
	// srqNumeric holds the open server requests whose JSON-RPC id is a
	// number: their answer must carry the number, not a string.
	srqNumeric map[string]bool
	// sessionsCapped: MaxTrackedSessions was reached (logged once).
	sessionsCapped bool
	// epochChanged is set by onReady when the replay epoch moved.
	epochChanged bool
	running      bool
	disc         discovery

	// heard, when set (tests), is called after any traffic from the
	// gateway refreshed the liveness clock, and after the heartbeat acted
	// on a CheckLink.
	heard func()
	// beat is the clock time (UnixNano) of the heartbeat's last wake-up,
	// stored once it acted on it (tests wait for it).
	beat atomic.Int64
	// beats counts the heartbeat's wake-ups (tests).
	beats atomic.Int64
	// polls counts finished session listings and polledBeats holds
	// beats as the last one finished, just before it woke the heartbeat
	// (tests wait for the heartbeat to re-arm after a listing).
	polls, polledBeats atomic.Int64
}

// features remembers what this gateway supports. Unknown until asked;
// a -32601 answer is remembered so Herald stops asking.
type features struct {
	ping, capabilities, replay tri
	serverRequests             bool // the gateway accepted client.capabilities
}

type tri int

const (
	unknown tri = iota
	yes
	no
)

// New returns a client for one gateway. Call Run to connect.
func New(cfg Config) (*Client, error) {
	t, err := parseTarget(cfg.URL)
	if err != nil {
		return nil, err
	}
	source.Defaults(&cfg.Clock, &cfg.Rand, &cfg.Logger)
	name := cfg.Name
	if name == "" {
		name = t.base.String()
	}
	c := &Client{
		cfg:      cfg,
		name:     name,
		clk:      cfg.Clock,
		log:      cfg.Logger.With("gateway", name),
		target:   t,
		rearm:    make(chan struct{}, 1),
		sessions: make(map[string]*session),
		openSRQ:  make(map[string]string),

		srqParams:  make(map[string]string),
		srqNumeric: make(map[string]bool),
	}
	c.out = source.NewBoundedEventQueue(cfg.Queue, c.log)
	c.auth = newAuthState(c)
	c.status = source.Status{Gateway: name, Kind: string(Kind), State: source.StateIdle}
	c.sup = source.NewSupervisor(source.SupervisorConfig{
		Connect: c.connectOnce, Classify: classify, Update: c.setStatus,
		Clock: c.clk, Rand: cfg.Rand, Logger: c.log, Backoff: cfg.Backoff,
	})
	return c, nil
}

// Name is the gateway's name in events.
func (c *Client) Name() string { return c.name }

// ReconnectNow redials at once: a live connection is closed first (its
// followed sessions are re-attached on the new one), a backoff wait is cut
// short, and a stopped state (auth or configuration error) is cleared.
func (c *Client) ReconnectNow() { c.sup.Kick() }

// SetCredentials replaces the token or password and reconnects.
func (c *Client) SetCredentials(token, username, password string) {
	c.mu.Lock()
	c.cfg.Token, c.cfg.Username, c.cfg.Password = token, username, password
	c.mu.Unlock()
	c.auth.reset()
	c.ReconnectNow()
}

// Run keeps the channel up until ctx ends. It returns ctx's error. Events
// already received are delivered before Run returns. The reconnect loop
// is the one every transport shares (source.Supervisor); connectOnce is
// one attempt of it.
func (c *Client) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return errors.New("gateway client already running")
	}
	c.running = true
	c.mu.Unlock()

	delivered := c.out.Deliver(c.cfg.OnEvent)
	defer func() {
		c.out.Close()
		<-delivered
	}()
	return c.sup.Run(ctx)
}

// classify says what an attempt's error means to the reconnect loop.
func classify(err error) (source.Fault, time.Duration) {
	var we *wokeError
	var ae *AuthError
	var ce *ConfigError
	switch {
	case errors.As(err, &we):
		// The link was fine before the sleep: redial now, no backoff.
		return source.FaultWoke, 0
	case errors.As(err, &ae):
		return source.FaultCredentials, 0
	case errors.As(err, &ce):
		return source.FaultConfig, 0
	}
	return source.DefaultClassify(err)
}

// connectOnce dials, handshakes, re-attaches sessions and then serves the
// connection until it dies (one attempt of the reconnect loop).
func (c *Client) connectOnce(ctx context.Context, l *source.Link) error {
	dctx, cancel := context.WithTimeout(ctx, DialTimeout)
	ws, err := c.dial(dctx)
	cancel()
	if err != nil {
		return err
	}
	cn := newConn(ws, c.clk.Now())
	ready := make(chan wire.Frame, 1)
	go cn.writeLoop()
	go c.readLoop(cn, ready)
	defer cn.fail(errors.New("connection closed by Herald"))

	// Handshake: the first frame must be gateway.ready.
	hs := c.clk.NewTimer(DialTimeout)
	var first wire.Frame
	select {
	case first = <-ready:
		hs.Stop()
	case <-hs.C():
		cn.fail(errors.New("the gateway accepted the connection but never sent gateway.ready within 10s; is this a Hermes gateway?"))
		return cn.reason()
	case <-cn.done:
		hs.Stop()
		return cn.reason()
	case <-ctx.Done():
		hs.Stop()
		return ctx.Err()
	}
	reconnect := c.onReady(cn, first)

	c.mu.Lock()
	c.conn = cn
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.conn == cn {
			c.conn = nil
		}
		c.mu.Unlock()
	}()

	l.Syncing(nil)
	c.negotiate(ctx, cn)
	c.probeConn(ctx, cn)
	c.resync(ctx, cn, reconnect)
	select {
	case <-cn.done:
		return cn.reason()
	default:
	}
	l.Up(nil)
	if c.pollDue(c.clk.Now(), true) {
		c.wakeHeartbeat() // it sleeps until the next listing too
		go c.poll(ctx, cn)
	}
	c.heartbeat(ctx, cn, l.NetworkChanged())
	return cn.reason()
}

// heartbeat keeps the link checked until it dies or ctx ends. It sleeps on
// one timer whose deadline moves with the traffic: an idle, healthy link
// costs one wake-up per PingInterval (the ping), a busy one fewer, and a
// silent one is declared dead DeadAfter after the last thing heard. Every
// wake-up also compares running time with wall time: if the wall clock
// jumped (the laptop slept, or the clock was set) the link is redialed at
// once instead of waiting to find out that it is dead.
func (c *Client) heartbeat(ctx context.Context, cn *conn, netChanged <-chan struct{}) {
	lastWake := c.clk.Now()
	t := c.clk.NewTimer(PingInterval)
	defer t.Stop()
	var probeBy time.Time // deadline of a CheckLink probe, zero if none
	var probeAt int64     // cn.reads when that probe was sent
	for {
		check := false
		select {
		case <-ctx.Done():
			cn.fail(ctx.Err())
			return
		case <-cn.done:
			return
		case <-netChanged:
			check = true
		case <-c.rearm:
		case <-t.C():
		}
		now := c.clk.Now()
		if j := clock.Jumped(c.clk, lastWake, now); j >= JumpThreshold || j <= -JumpThreshold {
			cn.fail(&wokeError{jump: j})
			return
		}
		lastWake = now
		last := cn.lastRead.Load()
		quiet := now.Sub(time.Unix(0, last))
		if quiet >= DeadAfter {
			cn.fail(fmt.Errorf("no reply from the gateway for %s; the link is dead", quiet.Truncate(time.Second)))
			return
		}
		if !probeBy.IsZero() {
			switch {
			case cn.reads.Load() > probeAt:
				probeBy = time.Time{} // answered
			case !now.Before(probeBy):
				cn.fail(fmt.Errorf("the network changed and the gateway did not answer within %s; reconnecting", ProbeTimeout))
				return
			}
		}
		ping := quiet >= PingInterval
		if check && probeBy.IsZero() {
			ping = true
			probeAt, probeBy = cn.reads.Load(), now.Add(ProbeTimeout)
		}
		// Re-arm before the ping goes out, so that whoever sees its reply
		// (a test's fake clock) finds the timer armed.
		wait := PingInterval - quiet
		if wait <= 0 || ping {
			wait = PingInterval
		}
		wait = min(wait, DeadAfter-quiet)
		if !probeBy.IsZero() {
			wait = min(wait, probeBy.Sub(now))
		}
		listNow := c.pollDue(now, false)
		c.checkQuiet(now)
		if d, ok := c.discoveryWake(now); ok {
			wait = min(wait, d)
		}
		// The deadline is absolute: time spent here (or a test's fake
		// clock moving meanwhile) does not push it back.
		clock.ResetAt(c.clk, t, now.Add(wait))
		if listNow {
			go c.poll(ctx, cn)
		}
		// One ping in flight at a time.
		if ping && cn.pinging.CompareAndSwap(false, true) {
			go func() {
				if c.ping(ctx, cn) {
					return // the pong handler ends this ping
				}
				cn.pinging.Store(false)
				if c.heard != nil {
					c.heard()
				}
			}()
		}
		c.beat.Store(now.UnixNano())
		c.beats.Add(1)
		if c.heard != nil {
			c.heard()
		}
	}
}

// CheckLink asks the client to make sure its link is alive now rather than
// at the next heartbeat: the network changed or the machine woke up. A link
// that does not answer within ProbeTimeout is redialed; if the wall clock
// jumped since the last check (a sleep) it is redialed at once.
func (c *Client) CheckLink() { c.sup.NetworkChanged() }

// wokeError ends a link after a wall-clock jump; Run redials at once.
type wokeError struct{ jump time.Duration }

func (e *wokeError) Error() string {
	if e.jump > 0 {
		return fmt.Sprintf("the computer was asleep or its clock moved (%s); reconnecting", e.jump.Round(time.Second))
	}
	return fmt.Sprintf("the computer's clock was set back (%s); reconnecting", (-e.jump).Round(time.Second))
}

// ping asks for a sign of life: gateway.ping where supported, otherwise a
// WebSocket ping control frame (answered by a pong). It reports whether it
// sent the latter, whose pong is still to come.
func (c *Client) ping(ctx context.Context, cn *conn) (awaitPong bool) {
	c.mu.Lock()
	usePing := c.feat.ping != no
	c.mu.Unlock()
	if usePing {
		pctx, cancel := context.WithTimeout(ctx, callTimeout)
		_, err := cn.call(pctx, "gateway.ping", struct{}{})
		cancel()
		if err == nil {
			c.setFeature(func(f *features) { f.ping = yes })
			return false
		}
		if !wire.IsMethodNotFound(err) {
			return false
		}
		c.setFeature(func(f *features) { f.ping = no })
	}
	cn.controlPing()
	return true
}

func (c *Client) setFeature(fn func(*features)) {
	c.mu.Lock()
	was := c.feat
	fn(&c.feat)
	f := c.feat
	c.mu.Unlock()
	if f == was {
		return // every ping answers: no news is no status change
	}
	c.publishFeatures()
}

// negotiate declares Herald's capabilities where the gateway supports it.
func (c *Client) negotiate(ctx context.Context, cn *conn) {
	c.mu.Lock()
	ask := c.feat.capabilities != no
	c.mu.Unlock()
	if !ask {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	// The params model forbids unknown keys: send exactly this one.
	res, err := cn.call(cctx, "client.capabilities", map[string]any{"server_requests": true})
	switch {
	case err == nil:
		var r struct {
			ServerRequests json.RawMessage `json:"server_requests"`
		}
		_ = json.Unmarshal(res, &r)
		c.setFeature(func(f *features) {
			f.capabilities = yes
			f.serverRequests = acceptsApprovals(r.ServerRequests)
		})
	case wire.IsMethodNotFound(err):
		c.setFeature(func(f *features) { f.capabilities = no; f.serverRequests = false })
	default:
		c.log.Info("client.capabilities failed", "err", err)
	}
}

// acceptsApprovals reads client.capabilities' server_requests: a list of
// method names (newer gateways) or a bool.
func acceptsApprovals(raw json.RawMessage) bool {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		for _, m := range list {
			if m == wire.ApprovalServerRequest {
				return true
			}
		}
		return false
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	return len(raw) == 0 // accepted without saying: assume yes
}

// Call sends a JSON-RPC request on the live connection and decodes its
// result into out (which may be nil).
func (c *Client) Call(ctx context.Context, method string, params, out any) error {
	cn := c.current()
	if cn == nil {
		return ErrNotConnected
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	if method == "prompt.submit" {
		c.submitting(params)
	}
	res, err := cn.call(ctx, method, params)
	if err != nil {
		if method == "prompt.submit" && IsOwnedElsewhere(err) {
			if p, ok := params.(map[string]any); ok {
				if sid, _ := p["session_id"].(string); sid != "" {
					c.markElsewhere(sid, "the gateway refused a prompt: another client owns this session now")
				}
			}
		}
		return err
	}
	if out != nil && len(res) > 0 {
		if err := json.Unmarshal(res, out); err != nil {
			return fmt.Errorf("the gateway's answer to %s did not decode: %w", method, err)
		}
	}
	return nil
}

func (c *Client) current() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// RespondApproval answers the event form of an approval
// (approval.respond). It returns how many pending approvals the gateway
// resolved: 0 means nothing was pending any more (answered elsewhere,
// expired or interrupted).
func (c *Client) RespondApproval(ctx context.Context, sessionID, choice, requestID string) (int, error) {
	if err := source.CheckChoice(choice); err != nil {
		return 0, err
	}
	params := map[string]any{"session_id": sessionID, "choice": choice}
	if requestID != "" {
		params["request_id"] = requestID
	}
	raw, err := c.callRaw(ctx, "approval.respond", params)
	if err != nil {
		// Written and lost, the cause says so (an OutcomeUnknownError);
		// else not sent, or refused with a JSON-RPC error.
		return 0, fmt.Errorf("sending the approval answer failed: %w", err)
	}
	n, err := wire.DecodeResolved(raw)
	if err != nil {
		// Written, and answered with something Herald does not
		// understand: the gateway may have applied it.
		return 0, peer.AnswerOutcome(true, false, fmt.Errorf("the gateway's answer to approval.respond did not decode: %v", err))
	}
	return n, nil
}

// RespondServerRequest answers the server-request form of an approval
// ("srq-..." id) with {choice}: with request.answer where the gateway has
// it, which says whether this answer won (wire.ErrRequestSettled when
// another client answered first or the request ended), else with a
// response frame, which returns once written: the only confirmation that
// form has. The answer carries the request's own id, as the gateway sent
// it (a number stays a number); an empty id, or a numeric one not open on
// this connection, is refused, since the gateway numbers its requests
// per connection.
func (c *Client) RespondServerRequest(ctx context.Context, requestID, choice string) error {
	if err := source.CheckChoice(choice); err != nil {
		return err
	}
	id, err := c.srqID(requestID)
	if err != nil {
		return err
	}
	if c.canRequestAnswer() {
		won, err := c.requestAnswer(ctx, requestID, map[string]string{"choice": choice})
		switch {
		case err != nil:
			return fmt.Errorf("sending the approval answer failed: %w", err)
		case !won:
			return wire.ErrRequestSettled
		}
		return nil
	}
	cn := c.current()
	if cn == nil {
		return ErrNotConnected
	}
	b, err := wire.EncodeResult(id, map[string]string{"choice": choice})
	if err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, callTimeout)
		defer cancel()
	}
	if err := cn.enqueue(ctx, b, true, nil); err != nil {
		if errors.Is(err, wire.ErrOutcomeUnknown) {
			// If the gateway lists it as open again after the reconnect,
			// deliver it again: that says the answer did not arrive.
			c.mu.Lock()
			delete(c.srqParams, requestID)
			c.mu.Unlock()
		}
		return fmt.Errorf("sending the approval answer failed: %w", err)
	}
	c.closeSRQ(requestID)
	return nil
}

// ErrNoRequestID is returned for an answer to a server request without an
// id: it could not name the request shown, so nothing is sent.
var ErrNoRequestID = errors.New("this request has no id to answer it by, so nothing was sent; answer it in Hermes")

// srqID is the JSON-RPC id to answer server request requestID with.
func (c *Client) srqID(requestID string) (json.RawMessage, error) {
	if requestID == "" {
		return nil, ErrNoRequestID
	}
	c.mu.Lock()
	numeric := c.srqNumeric[requestID]
	_, open := c.openSRQ[requestID]
	c.mu.Unlock()
	if numeric {
		return json.RawMessage(requestID), nil
	}
	if c0 := requestID[0]; !open && (c0 == '-' || c0 >= '0' && c0 <= '9') && json.Valid([]byte(requestID)) {
		// Looks like a number, but no such request is open here: the
		// gateway numbers requests per connection, so it could name
		// another one now.
		return nil, fmt.Errorf("request %s is not open on this connection any more, so nothing was sent: it may name another request now", requestID)
	}
	id, _ := json.Marshal(requestID)
	return id, nil
}

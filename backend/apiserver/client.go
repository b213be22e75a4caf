// Package apiserver monitors and answers Hermes Agent runs through the
// messaging gateway's OpenAI-compatible API server (default
// http://127.0.0.1:8642, bearer key API_SERVER_KEY), and feeds what it sees
// into Herald's normalized event model (wire.Event), like package gateway
// does for the dashboard's WebSocket.
//
// A Client starts runs (POST /v1/runs, with an Idempotency-Key so a retried
// start never starts two runs), follows each run's server-sent event stream
// (GET /v1/runs/{id}/events), answers approvals (POST
// /v1/runs/{id}/approval) and stops runs. Streams that drop are resumed with
// Last-Event-ID where the server sends event ids; where it does not (Hermes
// 0.18.2 serves exactly one reader per run and forgets the stream when that
// reader goes), the client falls back to polling GET /v1/runs/{id} on its
// clock and says in its Status that live events were interrupted.
//
// The SSE parser (SSEReader) and the event mapping (Normalizer,
// ChatStreamEvents) are exported for reuse with other Hermes streams, such
// as streaming chat completions that carry "event: approval.request".
//
// It is transport "api" of the contract in backend/source: Source (in
// driver.go) adapts a Client, with the capabilities RunStarter, Asker and
// Stopper, and the driver registered there opens and checks one. It
// imports backend/source, backend/wire and the other plain backend
// packages, never a sibling transport; nothing above backend/ imports it
// except the registration in backend/transports (and tests). Its fake
// server is backend/apiservertest.
//
// The client never sends an Origin header (the API server refuses unknown
// origins with 403) and never logs the key or puts it in an error.
package apiserver

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/addr"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// DefaultURL is where Hermes' API server listens unless configured
// otherwise (API_SERVER_HOST / API_SERVER_PORT).
const DefaultURL = "http://127.0.0.1:8642"

// Timing defaults.
const (
	// DefaultPollInterval is how often a run's status is polled when no
	// live stream can be had.
	DefaultPollInterval = 2 * time.Second
	// DefaultIdleTimeout is how long a run stream may stay silent before
	// it is declared dead. Hermes sends ": keepalive" every 30 s.
	DefaultIdleTimeout = 75 * time.Second
	// DefaultMaxRetryAfter bounds how long a Retry-After is waited out; a
	// longer one is returned to the caller as the error.
	DefaultMaxRetryAfter = 2 * time.Minute
	// callTimeout bounds one REST request (not streams).
	callTimeout = 30 * time.Second
	// maxBody bounds a REST response body.
	maxBody = 4 << 20
)

// Config describes one API server and how to reach it.
type Config struct {
	// Name identifies the server in events and status (default: URL).
	Name string
	// URL is the server's base URL (default DefaultURL). "host:port"
	// without a scheme means http. A trailing /v1 is accepted.
	URL string
	// Key is API_SERVER_KEY, sent as "Authorization: Bearer <key>". It is
	// never logged and never appears in errors.
	Key string
	// Header is added to every request. Origin and Authorization entries
	// are ignored: Herald never sends an Origin, and the key goes in Key.
	Header http.Header
	// RootCAs, when set, replaces the system roots for https://.
	RootCAs *x509.CertPool
	// HTTPClient, when set, is used for every request (RootCAs and
	// DialContext are then ignored), with redirects refused whatever its
	// CheckRedirect says. It must not have a Timeout, which would cut
	// event streams.
	HTTPClient *http.Client
	// DialContext, when set, replaces net.Dialer (tests put a chaos proxy
	// in the path with it).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Clock drives backoff, polling, Retry-After waits and the stream idle
	// watchdog (default: real).
	Clock clock.Clock
	// Backoff tunes retry delays (full jitter, bounded).
	Backoff source.Backoff
	// Rand returns uniform numbers in [0,1) for jitter (default math/rand).
	Rand func() float64
	// MaxRetries bounds retries of one REST request (default 4).
	MaxRetries int
	// MaxRetryAfter bounds a Retry-After wait (default DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// PollInterval is the status poll period without a live stream
	// (default DefaultPollInterval).
	PollInterval time.Duration
	// IdleTimeout declares a silent stream dead (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxEventSize bounds one server-sent event (default
	// DefaultMaxEventSize).
	MaxEventSize int
	// Logger receives diagnostics; the key is never logged.
	Logger *slog.Logger

	// OnEvent receives every event in order, from one goroutine, while
	// Run is active.
	OnEvent func(wire.Event)
	// OnStatus receives every status change, from the client's
	// goroutines. It must not block.
	OnStatus func(Status)
	// OnProblem, when set, hears of a failure no call returns: a run
	// followed by its id that the server does not know.
	OnProblem func(error)
}

// Client talks to one API server.
type Client struct {
	cfg  Config
	name string
	clk  clock.Clock
	log  *slog.Logger
	base *url.URL
	http *http.Client
	// sup runs the reconnect loop (connectOnce).
	sup *source.Supervisor
	// out is the two-lane queue: approvals jump ahead of
	// streamed text on their way to OnEvent, as on the WebSocket.
	out *source.EventQueue

	// pubMu orders status reports; pubSeq is the newest reported,
	// statusSeq (under mu) the newest taken.
	pubMu     sync.Mutex
	pubSeq    uint64
	statusSeq uint64

	mu      sync.Mutex
	key     string
	status  Status
	runs    map[string]*runState
	running bool
	runCtx  context.Context
	// started is closed once Run is active (and renewed when it returns).
	started chan struct{}
	wg      sync.WaitGroup
	wake    chan struct{} // closed and replaced by ReconnectNow / SetKey
	ok      chan struct{} // closed and replaced when a request succeeds after a failure
	feat    ServerInfo
	// Learned on this connection: turnCtl, what the server can do with
	// turns sent to a session (sessionturn.go); idsHonoured, that an
	// approval answer naming a request_id was applied to that request
	// (answerByOrder). Both are forgotten when a probe after the first
	// finds the server again after it was out of reach (lost), or
	// another version.
	turnCtl      TurnControl
	idsHonoured  bool
	probed, lost bool
}

// New returns a client for one API server. Call Run to follow runs and
// deliver events; the REST methods work without it.
func New(cfg Config) (*Client, error) {
	base, err := parseBaseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	source.Defaults(&cfg.Clock, &cfg.Rand, &cfg.Logger)
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 4
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxEventSize <= 0 {
		cfg.MaxEventSize = DefaultMaxEventSize
	}
	name := cfg.Name
	if name == "" {
		name = base.String()
	}
	c := &Client{
		cfg:     cfg,
		name:    name,
		clk:     cfg.Clock,
		log:     cfg.Logger.With("api_server", name),
		base:    base,
		out:     source.NewBoundedEventQueue(source.QueueLimits{}, cfg.Logger.With("api_server", name)),
		key:     cfg.Key,
		runs:    map[string]*runState{},
		started: make(chan struct{}),
		wake:    make(chan struct{}),
		ok:      make(chan struct{}),
	}
	c.status = Status{Status: source.Status{Gateway: name, Kind: string(Kind), State: source.StateIdle}}
	c.sup = source.NewSupervisor(source.SupervisorConfig{
		Connect: c.connectOnce, Classify: classify,
		Update: func(f func(*source.Status)) { c.setStatus(func(s *Status) { f(&s.Status) }) },
		Clock:  c.clk, Rand: cfg.Rand, Logger: c.log, Backoff: cfg.Backoff,
	})
	if cfg.HTTPClient != nil {
		c.http = source.WithoutRedirects(cfg.HTTPClient)
	} else {
		// The one construction every transport uses: no redirects, a
		// loopback name kept on loopback (addr.Dial).
		c.http = source.NewHTTPClient(source.HTTPOptions{RootCAs: cfg.RootCAs, DialContext: cfg.DialContext, ResponseHeaderTimeout: callTimeout})
	}
	return c, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = DefaultURL
	}
	given := raw // errors quote what the user typed, not what Herald added
	raw = addr.WithScheme(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		shown := fmt.Sprintf("%q", addr.Shown(given))
		if strings.Contains(given, "@") {
			shown = "the address" // may hold credentials: never echo it
		}
		return nil, &ConfigError{Msg: fmt.Sprintf("%s is not a usable API server address: give it as http://host:port (default %s)", shown, DefaultURL)}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &ConfigError{Msg: fmt.Sprintf("the API server address must start with http:// or https://, not %s://", u.Scheme)}
	}
	if u.User != nil {
		return nil, &ConfigError{Msg: "put the API server key in the key field, not in the address"}
	}
	if p := addr.SecretInQuery(given); p != "" {
		return nil, &ConfigError{Msg: addr.ErrSecretInQuery(given, p).Error()}
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// Name is the server's name in events.
func (c *Client) Name() string { return c.name }

// SetKey replaces the key and retries anything waiting on a refused one.
func (c *Client) SetKey(key string) {
	c.mu.Lock()
	c.key = key
	c.mu.Unlock()
	c.ReconnectNow()
}

// ReconnectNow cuts every backoff and poll wait short and clears a
// stopped state (refused key), so the client tries again at once.
func (c *Client) ReconnectNow() {
	c.mu.Lock()
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
	c.sup.Kick()
}

// CheckLink probes the server again at once (the network changed or the
// machine woke up), and cuts a reconnect wait short.
func (c *Client) CheckLink() { c.sup.NetworkChanged() }

func (c *Client) wakeChan() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wake
}

func (c *Client) currentKey() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.key
}

// Run probes the server, follows runs and delivers events until ctx ends.
// It returns ctx's error. Events already received are delivered before Run
// returns.
func (c *Client) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return errors.New("the API server client is already running")
	}
	c.running = true
	c.runCtx = ctx
	close(c.started)
	for _, rs := range c.runs {
		c.startFollowLocked(rs)
		c.startReconcileLocked(rs)
	}
	c.mu.Unlock()

	c.mu.Lock()
	q := c.out
	c.mu.Unlock()
	delivered := q.Deliver(c.cfg.OnEvent)
	defer func() {
		c.wg.Wait()
		c.mu.Lock()
		c.running = false
		c.runCtx = nil
		c.started = make(chan struct{})
		for _, rs := range c.runs {
			rs.following = false
		}
		// Events emitted from now on wait for the next Run.
		c.out = source.NewBoundedEventQueue(source.QueueLimits{}, c.log)
		c.mu.Unlock()
		q.Close()
		<-delivered
		c.setStatus(func(s *Status) { s.State = source.StateStopped; s.NextRetry = time.Time{} })
	}()

	return c.sup.Run(ctx)
}

// connectOnce is one attempt of the reconnect loop (source.Supervisor):
// it probes the server and, once it answered, holds the link up until the
// user asks to reconnect or a request finds the key refused. A network
// change probes again at once. Runs are followed on their own streams,
// with their own retries (follow.go).
func (c *Client) connectOnce(ctx context.Context, l *source.Link) (err error) {
	defer func() {
		if err != nil && ctx.Err() == nil {
			c.mu.Lock()
			c.lost = true
			c.mu.Unlock()
		}
	}()
	info, err := c.Probe(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.probed && (c.lost || c.feat.Version != info.Version) {
		// The server was out of reach, or says it is another version:
		// it may have restarted as another build, so what this
		// connection learned of it is forgotten.
		c.turnCtl, c.idsHonoured = TurnControlUnknown, false
	}
	c.feat, c.probed, c.lost = info, true, false
	tc := c.turnCtl
	c.mu.Unlock()
	c.setStatus(func(s *Status) {
		s.Version = info.Version
		s.Features = info.featureStatus()
		s.SessionTurns = tc
	})
	l.Up(nil)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.NetworkChanged():
			if _, err := c.Probe(ctx); err != nil {
				return err
			}
		}
	}
}

// classify says what an attempt's error means to the reconnect loop: a
// refused key or configuration waits for the user; a Retry-After is the
// least wait.
func classify(err error) (source.Fault, time.Duration) {
	var ae *APIError
	if permanent(err) {
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			return source.FaultCredentials, 0
		}
		return source.FaultConfig, 0
	}
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return source.FaultNetwork, ae.RetryAfter
	}
	return source.DefaultClassify(err)
}

// permanent reports errors that retrying cannot fix without a change.
func permanent(err error) bool {
	var ae *APIError
	var ce *ConfigError
	if errors.As(err, &ce) || source.IsRedirect(err) {
		return true
	}
	return errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden)
}

// refused records a refusal that a request (not the reconnect loop's
// probe) met: the status says so at once, and the loop ends its link and
// waits for the user, as after a refused probe.
func (c *Client) refused(err error) {
	st := source.StateAuthFailed
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		st = source.StateConfigError
	}
	c.log.Warn("API server refused Herald; waiting for a new key or a reconnect", "err", err)
	c.setStatus(func(s *Status) { s.State = st; s.Err = err.Error(); s.NextRetry = time.Time{} })
	c.sup.Fail(err)
}

// markOK records that a request went through: a retry wait or a refused
// key is over. (The probe loop owns the connecting state.)
func (c *Client) markOK() {
	recovering := func(st source.State) bool { return st == source.StateReconnecting || st == source.StateAuthFailed }
	c.mu.Lock()
	st := c.status.State
	c.mu.Unlock()
	if !recovering(st) {
		return
	}
	if st == source.StateAuthFailed {
		// The key is accepted again: the reconnect loop, waiting for the
		// user, probes at once.
		c.sup.Kick()
	}
	c.mu.Lock()
	close(c.ok)
	c.ok = make(chan struct{})
	c.mu.Unlock()
	c.setStatus(func(s *Status) {
		if !recovering(s.State) {
			return
		}
		s.State, s.Err, s.NextRetry, s.Attempt = source.StateConnected, "", time.Time{}, 0
		if s.ConnectedAt.IsZero() {
			s.ConnectedAt = c.clk.Now()
		}
	})
}

// delay is the wait before retry number attempt: the server's Retry-After
// when it gave one, else jittered exponential backoff, but never less than
// a retry: the stream asked for.
func (c *Client) delay(attempt int, ae *APIError, serverRetry time.Duration) time.Duration {
	if ae != nil && ae.RetryAfter > 0 {
		return ae.RetryAfter
	}
	d := c.cfg.Backoff.Delay(attempt, c.cfg.Rand())
	if serverRetry > d {
		d = serverRetry
		if limit := c.cfg.MaxRetryAfter; d > limit {
			d = limit
		}
	}
	return d
}

// sleep waits d on the clock, announcing the wait in the status first so
// that observers (and tests driving a fake clock) see it armed. It returns
// false if ctx ended.
func (c *Client) sleep(ctx context.Context, d time.Duration, why string, attempt int) bool {
	wake := c.wakeChan()
	t := c.clk.NewTimer(d)
	defer t.Stop()
	next := c.clk.Now().Add(d)
	c.setStatus(func(s *Status) {
		if s.State != source.StateAuthFailed && s.State != source.StateConfigError {
			s.State = source.StateReconnecting
		}
		s.Err, s.NextRetry, s.Attempt = why, next, attempt
	})
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
	case <-wake:
	}
	return true
}

// emit queues an event for OnEvent.
func (c *Client) emit(ev wire.Event) {
	c.mu.Lock()
	q := c.out
	c.mu.Unlock()
	q.Push(ev)
}

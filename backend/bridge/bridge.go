// Package bridge is Herald's client of the Hermes plugin "herald"
// (hermes-plugin/herald): the route /api/plugins/herald/ that a Hermes
// dashboard serves once the plugin is enabled. Through it Herald sees the
// approvals of every Hermes process of that profile (CLI, TUI, messaging
// gateway, cron), not only the dashboard's own sessions, and answers them.
//
// The route is a long-poll: GET v1/poll returns every waiting approval and
// notice once something changed after the client's cursor. A client that
// polls again with the new cursor has taken what it was given; a request
// that no Herald takes within the plugin's grace period (5 s) goes back to
// Hermes, which falls back to its own prompt. POST v1/answer answers one
// approval, bound to its id and digest; the first answer wins.
//
// Approvals arrive as wire events of the server-request form (request id
// = the plugin's id, Epoch = the plugin's instance), so the approval inbox
// answers them exactly once like any other; requests that leave the poll
// arrive as request.cancel. Notices (Hermes versions without approval
// transports: answer where it was asked) go to Config.OnNotice.
//
// It is transport "bridge" of the contract in backend/source (driver.go);
// like its siblings it is registered by backend/transports and named by
// nothing above backend/. Its fake plugin is backend/bridge/bridgetest.
package bridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/addr"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Kind is the bridge's transport kind.
const Kind source.Kind = "bridge"

// Route is where the plugin's API lives on a dashboard.
const Route = "/api/plugins/herald/"

// Bounds on what the route can make Herald hold or read.
const (
	MaxBody   = 4 << 20          // one poll response
	MaxItems  = 128              // approvals and notices in one poll
	PollWait  = 8 * time.Second  // the plugin's bound: a long-poll holds up the dashboard's shutdown
	httpSlack = 15 * time.Second // beyond PollWait before a poll is given up
)

var peer = source.Peer{Name: "the Hermes dashboard", Reach: "check the gateway's address and that the Hermes dashboard is running"}

// Origin is where an approval was asked, as the plugin's observer hooks saw it.
type Origin struct {
	Surface  string `json:"surface,omitempty"`  // cli, telegram, discord, dashboard, ...
	Platform string `json:"platform,omitempty"` // the messaging platform, when any
	// SessionKey is Hermes' session key; SessionID the dashboard's live
	// session id for a dashboard session.
	SessionKey string `json:"session_key,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Chat       string `json:"chat,omitempty"`    // the chat's name on a messaging platform
	Title      string `json:"title,omitempty"`   // the session's title
	Process    string `json:"process,omitempty"` // "dashboard" when asked in the dashboard's own process
}

// Where names the origin for people: "Telegram", "the CLI", "the dashboard".
func (o Origin) Where() string {
	s := strings.ToLower(o.Surface)
	switch s {
	case "", "hermes":
		return "Hermes"
	case "cli":
		return "the CLI"
	case "tui":
		return "the TUI"
	case "dashboard":
		return "the dashboard"
	case "cron":
		return "a cron job"
	}
	known := map[string]string{"telegram": "Telegram", "discord": "Discord", "slack": "Slack", "whatsapp": "WhatsApp",
		"signal": "Signal", "matrix": "Matrix", "email": "email", "sms": "SMS", "teams": "Teams", "irc": "IRC"}
	if n, ok := known[s]; ok {
		return n
	}
	return o.Surface
}

// Asked says where an approval was asked, for people: every surface shows
// it with the request's description ("asked in Telegram (Ops), session
// “Deploy”").
func (o Origin) Asked() string {
	s := "asked in " + o.Where()
	if o.Chat != "" {
		s += " (" + o.Chat + ")"
	}
	if o.Title != "" {
		s += ", session “" + o.Title + "”"
	}
	return s
}

// Item is one entry of a poll: an approval (answer through the bridge) or
// a notice (answer where it was asked).
type Item struct {
	Kind           string   `json:"kind"` // "approval" or "notice"
	ID             string   `json:"id"`
	Digest         string   `json:"digest,omitempty"`
	Command        string   `json:"command"`
	Description    string   `json:"description,omitempty"`
	PatternKey     string   `json:"pattern_key,omitempty"`
	PatternKeys    []string `json:"pattern_keys,omitempty"`
	Surface        string   `json:"surface,omitempty"` // Hermes' surface: cli, gateway, transport:herald
	AllowedChoices []string `json:"allowed_choices"`
	TimeoutSeconds float64  `json:"timeout_seconds,omitempty"`
	ExpiresIn      float64  `json:"expires_in,omitempty"`
	Origin         Origin   `json:"origin"`
}

// Ended is a request or notice that left the poll, with why.
type Ended struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	Choice  string `json:"choice,omitempty"`
}

// State is one poll response.
type State struct {
	Protocol int     `json:"protocol"`
	Instance string  `json:"instance"`
	Cursor   int64   `json:"cursor"`
	Items    []Item  `json:"items"`
	Recent   []Ended `json:"recent"`
	Watchers int     `json:"watchers"`
}

// Config configures a Client.
type Config struct {
	// Name is the source's name (unique among Herald's sources).
	Name string
	// URL is the dashboard: its http(s) base, or the gateway's ws(s) URL
	// (…/api/ws?token=…), from which the base is derived.
	URL string
	// Token is the dashboard's session token (the gateway's token).
	Token string
	// RootCAs, when set, replaces the system roots for https.
	RootCAs *x509.CertPool
	// HTTP overrides the HTTP client (tests).
	HTTP *http.Client
	// ClientID names this Herald to the plugin (default: random).
	ClientID string
	Clock    clock.Clock
	Logger   *slog.Logger
	Rand     func() float64
	Backoff  source.Backoff
	// OnEvent receives approvals (server-request form) and their ends
	// (request.cancel), and notices (source.EventWaitingElsewhere and its
	// end), in order. It must not block for long.
	OnEvent func(wire.Event)
	// OnStatus receives status changes.
	OnStatus func(source.Status)
}

// Client follows one dashboard's bridge route.
type Client struct {
	cfg  Config
	base *url.URL
	hc   *http.Client
	kick chan struct{}

	mu       sync.Mutex
	status   source.Status
	instance string
	cursor   int64
	known    map[string]Item // by id, this instance's
	// ended keeps what left the poll a while (bounded), so an answer to it
	// still reaches the route, which says why it is refused, or that the
	// answer was this Herald's own whose reply was lost.
	ended  map[string]Item
	endedQ []string
	resync bool // the next poll returns at once (after a failure)
	// answering holds the ids with an answer on its way; a poll that finds
	// one gone leaves its end to the answer's result (the outcome it saw
	// is kept here), so Herald's own answer never reads as "elsewhere".
	answering map[string]*string
}

const maxEnded = 256

func (c *Client) rememberLocked(it Item) {
	if _, ok := c.ended[it.ID]; ok {
		return
	}
	c.ended[it.ID] = it
	c.endedQ = append(c.endedQ, it.ID)
	if len(c.endedQ) > maxEnded {
		delete(c.ended, c.endedQ[0])
		c.endedQ = c.endedQ[1:]
	}
}

// New checks cfg and returns a Client; Run follows the route.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Name) == "" {
		return nil, errors.New("a bridge needs a name")
	}
	base, err := addr.DashboardBase(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		if t := tokenOf(cfg.URL); t != "" {
			cfg.Token = t
		}
	}
	source.Defaults(&cfg.Clock, &cfg.Rand, &cfg.Logger)
	if cfg.ClientID == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		cfg.ClientID = "herald-" + hex.EncodeToString(b)
	}
	hc := cfg.HTTP
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Trust by the address dialled: a loopback target stays on
		// loopback and never goes through a proxy (backend/addr).
		tr.Proxy, tr.DialContext = addr.Proxy, addr.Dial(tr.DialContext)
		if cfg.RootCAs != nil {
			tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
		}
		hc = &http.Client{Transport: tr}
	}
	c := &Client{cfg: cfg, base: base, hc: hc, kick: make(chan struct{}, 1), known: map[string]Item{}, ended: map[string]Item{}, answering: map[string]*string{}}
	c.status = source.Status{Gateway: cfg.Name, Kind: string(Kind), State: source.StateIdle}
	return c, nil
}

func tokenOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Query().Get("token")
}

// Name is the source's name.
func (c *Client) Name() string { return c.cfg.Name }

// Kind is "bridge".
func (c *Client) Kind() source.Kind { return Kind }

// Status is the route's connection status.
func (c *Client) Status() source.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// ReconnectNow cuts a backoff wait short.
func (c *Client) ReconnectNow() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Follow is not needed: the bridge sees every session of its profile.
func (c *Client) Follow(context.Context, string) error {
	return errors.New("the bridge sees every session of its Hermes profile; there is nothing to follow")
}

// Unfollow does nothing (see Follow).
func (c *Client) Unfollow(string) {}

// RespondApproval is for the event form, which the bridge never sends.
func (c *Client) RespondApproval(context.Context, string, string, string) (int, error) {
	return 0, errors.New("bridge approvals are answered by request id")
}

func (c *Client) setStatus(f func(*source.Status)) {
	c.mu.Lock()
	f(&c.status)
	st := c.status
	c.mu.Unlock()
	if c.cfg.OnStatus != nil {
		c.cfg.OnStatus(st)
	}
}

// Run polls the route until ctx ends.
func (c *Client) Run(ctx context.Context) error {
	defer c.setStatus(func(s *source.Status) { s.State = source.StateStopped })
	attempt := 0
	for ctx.Err() == nil {
		c.setStatus(func(s *source.Status) {
			if s.State != source.StateConnected {
				s.State = source.StateConnecting
			}
			s.Dials++
		})
		st, err := c.poll(ctx)
		if err == nil {
			attempt = 0
			c.apply(st)
			continue
		}
		if ctx.Err() != nil {
			break
		}
		state := source.StateReconnecting
		var he *httpError
		if errors.As(err, &he) {
			switch he.code {
			case http.StatusUnauthorized, http.StatusForbidden:
				state = source.StateAuthFailed
			case http.StatusNotFound:
				state = source.StateConfigError
			}
		}
		delay := c.cfg.Backoff.Delay(attempt, c.cfg.Rand())
		if state.NeedsUser() && delay < 30*time.Second {
			delay = 30 * time.Second // the user has to act on the host; poll now and then
		}
		attempt++
		c.setStatus(func(s *source.Status) {
			s.State, s.Err, s.Attempt = state, err.Error(), attempt
			s.NextRetry = c.cfg.Clock.Now().Add(delay)
		})
		c.lost()
		t := c.cfg.Clock.NewTimer(delay)
		select {
		case <-ctx.Done():
		case <-t.C():
		case <-c.kick:
		}
		t.Stop()
	}
	return ctx.Err()
}

// lost marks the route unreachable. What it showed stays: the plugin keeps
// waiting for a request a Herald took, so it must stay answerable here; the
// next poll after reconnecting settles what ended meanwhile (or, after a
// dashboard restart, withdraws everything).
func (c *Client) lost() {
	c.mu.Lock()
	c.resync = true
	c.mu.Unlock()
}

type httpError struct {
	code   int
	detail string
}

func (e *httpError) Error() string {
	switch e.code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "the Hermes dashboard refused Herald's token for the bridge: check the gateway's token"
	case http.StatusNotFound:
		return "this Hermes dashboard has no Herald bridge (/api/plugins/herald/): run `herald bridge install` on the Hermes host, then restart the dashboard"
	}
	if e.detail != "" {
		return fmt.Sprintf("the Herald bridge answered %d: %s", e.code, e.detail)
	}
	return fmt.Sprintf("the Herald bridge answered HTTP %d", e.code)
}

func (c *Client) endpoint(p string, q url.Values) string {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + Route + p
	if q != nil {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func (c *Client) poll(ctx context.Context) (State, error) {
	c.mu.Lock()
	q := url.Values{"instance": {c.instance}, "cursor": {strconv.FormatInt(c.cursor, 10)}, "client": {c.cfg.ClientID}}
	first := c.instance == "" || c.resync
	c.resync = false
	c.mu.Unlock()
	wait := PollWait
	if first {
		wait = 0
	}
	q.Set("wait", strconv.Itoa(int(wait/time.Second)))
	ctx, cancel := context.WithTimeout(ctx, wait+httpSlack)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint("v1/poll", q), nil)
	if err != nil {
		return State{}, err
	}
	c.auth(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return State{}, peer.DescribeNetErr(c.base.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return State{}, peer.DescribeNetErr(c.base.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return State{}, &httpError{code: resp.StatusCode, detail: detailOf(body)}
	}
	if len(body) > MaxBody {
		return State{}, fmt.Errorf("the Herald bridge sent more than %d bytes in one poll", MaxBody)
	}
	var st State
	if err := json.Unmarshal(body, &st); err != nil {
		return State{}, fmt.Errorf("the Herald bridge sent an unreadable poll (%v)", err)
	}
	if st.Protocol != 1 || st.Instance == "" {
		return State{}, fmt.Errorf("the Herald bridge speaks protocol %d; this Herald speaks 1: update the plugin or Herald", st.Protocol)
	}
	if len(st.Items) > MaxItems {
		st.Items = st.Items[:MaxItems]
	}
	return st, nil
}

func (c *Client) auth(req *http.Request) {
	if c.cfg.Token != "" {
		req.Header.Set("X-Hermes-Session-Token", c.cfg.Token)
	}
}

func detailOf(body []byte) string {
	var d struct {
		Detail any `json:"detail"`
	}
	if json.Unmarshal(body, &d) == nil {
		if s, ok := d.Detail.(string); ok {
			if len(s) > 300 {
				s = s[:300]
			}
			return s
		}
	}
	return ""
}

// apply reports what changed since the last poll.
func (c *Client) apply(st State) {
	now := c.cfg.Clock.Now()
	c.mu.Lock()
	oldInst := c.instance
	restarted := oldInst != "" && oldInst != st.Instance
	var gone []Item
	if restarted {
		for _, it := range c.known {
			gone = append(gone, it)
		}
		c.known = map[string]Item{}
	}
	seen := make(map[string]bool, len(st.Items))
	var arrived []Item
	for _, it := range st.Items {
		if it.ID == "" || seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		if _, ok := c.known[it.ID]; !ok {
			c.known[it.ID] = it
			arrived = append(arrived, it)
		}
	}
	recent := make(map[string]Ended, len(st.Recent))
	for _, e := range st.Recent {
		recent[e.ID] = e
	}
	for id, it := range c.known {
		if !seen[id] {
			delete(c.known, id)
			c.rememberLocked(it)
			if out, busy := c.answering[id]; busy && !restarted {
				*out = firstOf(recent[id].Outcome, "gone")
				continue
			}
			gone = append(gone, it)
		}
	}
	c.instance, c.cursor = st.Instance, st.Cursor
	c.mu.Unlock()
	for _, it := range gone {
		inst := st.Instance
		if restarted {
			inst = oldInst
		}
		e := recent[it.ID]
		why := ""
		if restarted {
			why = wire.CancelGatewayRestarted
		}
		c.end(inst, it, e.Outcome, why, now)
	}
	for _, it := range arrived {
		c.arrive(st.Instance, it, now)
	}
	c.setStatus(func(s *source.Status) {
		if s.State != source.StateConnected {
			s.ConnectedAt = now
		}
		s.State, s.Err, s.Attempt, s.NextRetry = source.StateConnected, "", 0, time.Time{}
		s.Epoch = st.Instance
		s.Features.ServerRequests = true
		s.Sessions = len(st.Items)
	})
}

func (c *Client) arrive(instance string, it Item, now time.Time) {
	if it.Kind == "notice" {
		c.notice(source.EventWaitingElsewhere, it, "", now)
		return
	}
	if c.cfg.OnEvent == nil {
		return
	}
	p := wire.ApprovalPayload{
		SessionID: sessionOf(it), Command: it.Command, Description: it.Origin.Asked() + " — " + it.Description,
		PatternKey: it.PatternKey, PatternKeys: it.PatternKeys, Choices: it.AllowedChoices,
	}
	raw, _ := json.Marshal(p)
	ev := wire.Event{Gateway: c.cfg.Name, Session: sessionOf(it), StoredSession: it.Origin.SessionKey,
		Kind: wire.ApprovalServerRequest, RequestID: it.ID, Epoch: instance, Payload: raw, ReceivedAt: now, Data: &p}
	c.cfg.OnEvent(ev)
}

// sessionOf names the approval's session for the inbox: Hermes' session
// key when the observer hook gave one, else where it was asked.
func sessionOf(it Item) string {
	switch {
	case it.Origin.SessionID != "":
		return it.Origin.SessionID
	case it.Origin.SessionKey != "":
		return it.Origin.SessionKey
	case it.Origin.Surface != "":
		return "bridge:" + it.Origin.Surface
	}
	return "bridge"
}

func (c *Client) end(instance string, it Item, outcome, why string, now time.Time) {
	if it.Kind == "notice" {
		c.notice(source.EventWaitingElsewhereEnd, it, firstOf(outcome, firstOf(why, "gone")), now)
		return
	}
	if c.cfg.OnEvent == nil {
		return
	}
	reason := why
	if reason == "" {
		reason = cancelReason(outcome)
	}
	p := wire.CancelPayload{ID: it.ID, Method: "approval", Reason: reason}
	raw, _ := json.Marshal(p)
	c.cfg.OnEvent(wire.Event{Gateway: c.cfg.Name, Session: sessionOf(it), StoredSession: it.Origin.SessionKey,
		Kind: wire.RequestCancel, RequestID: it.ID, Epoch: instance, Payload: raw, ReceivedAt: now, Data: &p})
}

// notice reports a notice (an approval to answer where it was asked).
func (c *Client) notice(kind string, it Item, outcome string, now time.Time) {
	if c.cfg.OnEvent == nil {
		return
	}
	o := it.Origin
	p := source.WaitingPayload{ID: it.ID, Command: it.Command, Description: it.Description, Where: o.Where(),
		Chat: o.Chat, Title: o.Title, SessionKey: o.SessionKey, SessionID: o.SessionID,
		Dashboard: o.Process == "dashboard", Outcome: outcome}
	raw, _ := json.Marshal(p)
	c.cfg.OnEvent(wire.Event{Gateway: c.cfg.Name, Session: firstOf(o.SessionID, o.SessionKey), StoredSession: o.SessionKey,
		Kind: kind, Payload: raw, ReceivedAt: now, Data: &p})
}

// cancelReason maps the plugin's outcome to request.cancel's reasons.
func cancelReason(outcome string) string {
	switch outcome {
	case "answered":
		return "resolved"
	case "expired", "timeout", "transport_timeout":
		return "timeout"
	case "interrupted", "transport_interrupted":
		return "interrupted"
	case "gone":
		return "session_closed"
	case "closed":
		return "shutdown"
	case "unwatched":
		return "no Herald took it in time, so Hermes asked on its own prompt"
	case "":
		return "the Herald bridge no longer lists it"
	}
	if strings.HasPrefix(outcome, "transport_") {
		return "Hermes gave up on it (" + strings.TrimPrefix(outcome, "transport_") + ")"
	}
	return "resolved" // a choice recorded by Hermes: answered on its own prompt
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// AnswerError is the route's refusal of an answer.
type AnswerError struct {
	Status int
	Code   string // already_answered, gone, unknown, mismatch, not_offered, notice
	Detail string
	Choice string // already_answered: the winning choice
}

func (e *AnswerError) Error() string {
	if e.Detail != "" {
		return "the Herald bridge refused the answer: " + e.Detail
	}
	return fmt.Sprintf("the Herald bridge refused the answer (%d %s)", e.Status, e.Code)
}

// RespondServerRequest answers the bridge approval requestID with choice,
// bound to the digest the route sent with it. The first answer wins: an
// answer that lost (another Herald, Hermes' own prompt, a timeout) ends the
// request with request.cancel and returns an *AnswerError.
func (c *Client) RespondServerRequest(ctx context.Context, requestID, choice string) error {
	if err := source.CheckChoice(choice); err != nil {
		return err
	}
	c.mu.Lock()
	it, ok := c.known[requestID]
	if !ok {
		it, ok = c.ended[requestID]
	}
	inst := c.instance
	_, busy := c.answering[requestID]
	seenGone := new(string)
	if ok && !busy {
		c.answering[requestID] = seenGone
	}
	c.mu.Unlock()
	if !ok || it.Kind != "approval" {
		return &AnswerError{Status: http.StatusNotFound, Code: "unknown", Detail: "Herald does not know this approval on the bridge"}
	}
	if busy {
		return errors.New("an answer to this approval is already on its way")
	}
	err := c.answer(ctx, it, inst, choice)
	c.mu.Lock()
	delete(c.answering, requestID)
	if err == nil {
		// Answered: the inbox settles it from this result, not from a
		// later poll's request.cancel.
		if _, still := c.known[requestID]; still {
			delete(c.known, requestID)
			c.rememberLocked(it)
		}
	}
	c.mu.Unlock()
	if err != nil && *seenGone != "" {
		// The poll saw it end while the answer was on its way and left
		// the end to us: the answer failed, so report that end now.
		c.end(inst, it, *seenGone, "", c.cfg.Clock.Now())
	}
	return err
}

func (c *Client) answer(ctx context.Context, it Item, inst, choice string) error {
	requestID := it.ID
	body, _ := json.Marshal(map[string]string{"id": it.ID, "digest": it.Digest, "choice": choice, "client": c.cfg.ClientID})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint("v1/answer", nil), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c.auth(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return peer.DescribeNetErr(c.base.Host, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var res struct {
		Status  string `json:"status"`
		Detail  string `json:"detail"`
		Choice  string `json:"choice"`
		Outcome string `json:"outcome"`
		ByYou   bool   `json:"by_you"`
	}
	_ = json.Unmarshal(raw, &res)
	if resp.StatusCode == http.StatusOK && res.Status == "answered" {
		return nil
	}
	if res.Status == "already_answered" && res.ByYou && res.Choice == choice {
		return nil // this Herald's own answer, whose reply was lost: reconciled, not sent twice
	}
	ae := &AnswerError{Status: resp.StatusCode, Code: res.Status, Detail: res.Detail, Choice: res.Choice}
	if resp.StatusCode == http.StatusUnauthorized {
		ae.Detail = "the Hermes dashboard refused Herald's token"
		return ae
	}
	switch res.Status {
	case "already_answered", "gone", "unknown":
		// The request is over: say so now, before the next poll would.
		outcome := res.Outcome
		if res.Status == "already_answered" {
			outcome = "answered"
		}
		c.mu.Lock()
		_, still := c.known[requestID]
		if still {
			delete(c.known, requestID)
			c.rememberLocked(it)
		}
		c.mu.Unlock()
		if still {
			c.end(inst, it, outcome, "", c.cfg.Clock.Now())
		}
	}
	return ae
}

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
	"context"
	"crypto/rand"
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
	// MinPollInterval is the least time between the starts of two polls.
	// A route answers a long-poll as soon as something changes; one that
	// answers every poll at once (a churning or hostile route) is polled
	// at this pace, not as fast as it answers.
	MinPollInterval = time.Second
	// maxKeptCommand bounds the command the client keeps of a request it
	// delivered (to end it, or answer it after it left the poll): the
	// inbox has the whole one.
	maxKeptCommand = 1 << 10
)

var peer = source.Peer{Name: "the Hermes dashboard", Reach: "check the gateway's address and that the Hermes dashboard is running", Is: "a Herald bridge"}

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

// Ended is a request or notice that left the poll, with why: an answered
// one names the choice and the client that answered (By, its client id).
type Ended struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	Choice  string `json:"choice,omitempty"`
	By      string `json:"by,omitempty"`
}

// State is one poll response.
type State struct {
	Protocol int     `json:"protocol"`
	Instance string  `json:"instance"`
	Cursor   int64   `json:"cursor"`
	Items    []Item  `json:"items"`
	Recent   []Ended `json:"recent"`
	Watchers int     `json:"watchers"`
	// seq numbers the poll (Client.polls when it was sent); held: it
	// asked the route to hold it until something changed.
	seq  int64
	held bool
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
	// HTTP overrides the HTTP client (tests); its redirects are refused
	// all the same.
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
	sup  *source.Supervisor

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
	// polls counts the polls sent (State.seq).
	polls int64
	// answering holds the ids with an answer on its way; a poll that finds
	// one gone leaves its end to the answer's result (what it saw is kept
	// here), so Herald's own answer never reads as "elsewhere".
	answering map[string]*Ended
	// unsure holds the answers whose outcome is unknown (written, reply
	// lost), by id: the next poll settles each (settleUnsureLocked).
	unsure map[string]unsureAnswer
}

// unsureAnswer is an answer of unknown outcome, waiting for a poll.
type unsureAnswer struct {
	item     Item
	instance string
	choice   string
	// after is Client.polls when the answer failed: only a poll sent
	// after it can settle it.
	after int64
}

const maxEnded = 256

// kept is what the client keeps of a delivered request: all of it but
// the command, which it cuts (the inbox has the whole one).
func kept(it Item) Item {
	if len(it.Command) > maxKeptCommand {
		it.Command = strings.Clone(it.Command[:maxKeptCommand]) // a copy: the whole one is let go
	}
	it.PatternKeys = nil
	return it
}

func (c *Client) rememberLocked(it Item) {
	if _, ok := c.ended[it.ID]; ok {
		return
	}
	c.ended[it.ID] = kept(it)
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
	// The one construction every transport uses: no redirects (the
	// token must never follow one), a loopback target kept on loopback
	// and never proxied (backend/addr).
	var hc *http.Client
	if cfg.HTTP != nil {
		hc = source.WithoutRedirects(cfg.HTTP)
	} else {
		hc = source.NewHTTPClient(source.HTTPOptions{RootCAs: cfg.RootCAs})
	}
	c := &Client{cfg: cfg, base: base, hc: hc, known: map[string]Item{}, ended: map[string]Item{},
		answering: map[string]*Ended{}, unsure: map[string]unsureAnswer{}}
	c.status = source.Status{Gateway: cfg.Name, Kind: string(Kind), State: source.StateIdle}
	c.sup = source.NewSupervisor(source.SupervisorConfig{
		Connect: c.connectOnce, Classify: classify, Update: c.setStatus,
		Clock: cfg.Clock, Rand: cfg.Rand, Logger: cfg.Logger.With("bridge", cfg.Name), Backoff: cfg.Backoff,
	})
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

// ReconnectNow polls again at once: it cuts a backoff wait short and
// ends the wait after a refusal.
func (c *Client) ReconnectNow() { c.sup.Kick() }

// CheckLink polls again at once (the network changed or the machine woke
// up): a poll in flight is given up, a backoff wait cut short.
func (c *Client) CheckLink() { c.sup.NetworkChanged() }

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

// Run polls the route until ctx ends. The reconnect loop is the one
// every transport shares (source.Supervisor); connectOnce is one attempt
// of it.
func (c *Client) Run(ctx context.Context) error { return c.sup.Run(ctx) }

// classify says what a poll's error means to the reconnect loop: a
// refused token, a dashboard without the plugin and a redirect (not a
// Herald bridge) wait for the user.
func classify(err error) (source.Fault, time.Duration) {
	var he *httpError
	if errors.As(err, &he) {
		switch he.code {
		case http.StatusUnauthorized, http.StatusForbidden:
			return source.FaultCredentials, 0
		case http.StatusNotFound:
			return source.FaultConfig, 0
		}
	}
	return source.DefaultClassify(err)
}

// errNetworkChanged ends a poll in flight when the network changed.
var errNetworkChanged = errors.New("the network changed")

// connectOnce polls until a poll fails (one attempt of the reconnect
// loop). A long-poll that returned without waiting (sooner than
// MinPollInterval after it was sent: the route answers at once, or churns)
// is followed by the next one only MinPollInterval after it was sent; one
// that held until something changed is followed at once, as is a poll
// that asked not to wait (the first, and the one after a failure). A
// network change gives up the poll in flight and polls again at once.
func (c *Client) connectOnce(ctx context.Context, l *source.Link) error {
	for {
		sent := c.cfg.Clock.Now()
		c.setStatus(func(s *source.Status) { s.Dials++ })
		st, err := c.pollWatching(ctx, l)
		switch {
		case errors.Is(err, errNetworkChanged):
			c.lost() // the next poll returns at once
			continue
		case err != nil:
			c.lost()
			return err
		}
		c.apply(st, l)
		if st.held {
			if err := c.pace(ctx, sent); err != nil {
				return err
			}
		}
	}
}

// pace waits until MinPollInterval has passed since last, on the clock.
func (c *Client) pace(ctx context.Context, last time.Time) error {
	d := last.Add(MinPollInterval).Sub(c.cfg.Clock.Now())
	if d <= 0 {
		return nil
	}
	t := c.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// pollWatching is one poll, given up with errNetworkChanged when the
// network changes meanwhile.
func (c *Client) pollWatching(ctx context.Context, l *source.Link) (State, error) {
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-l.NetworkChanged():
			cancel(errNetworkChanged)
		case <-stop:
		}
	}()
	st, err := c.poll(pctx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(pctx), errNetworkChanged) {
		return State{}, errNetworkChanged
	}
	return st, err
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
	c.polls++
	seq := c.polls
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
	if source.RedirectStatus(resp.StatusCode) {
		return State{}, peer.Redirected(c.base.Host, resp.StatusCode) // not a Herald bridge
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return State{}, &httpError{code: resp.StatusCode, detail: detailOf(body)}
	}
	body := &io.LimitedReader{R: resp.Body, N: MaxBody + 1}
	st, err := decodeState(body)
	switch {
	case body.N <= 0:
		return State{}, fmt.Errorf("the Herald bridge sent more than %d bytes in one poll", MaxBody)
	case err != nil && !errors.As(err, new(*json.SyntaxError)) && !errors.As(err, new(*json.UnmarshalTypeError)) && !errors.Is(err, errNotAPoll):
		return State{}, peer.DescribeNetErr(c.base.Host, err) // the link failed while reading
	case err != nil:
		return State{}, fmt.Errorf("the Herald bridge sent an unreadable poll (%v)", err)
	}
	if st.Protocol != 1 || st.Instance == "" {
		return State{}, fmt.Errorf("the Herald bridge speaks protocol %d; this Herald speaks 1: update the plugin or Herald", st.Protocol)
	}
	if len(st.Recent) > maxEnded {
		st.Recent = st.Recent[len(st.Recent)-maxEnded:]
	}
	st.seq, st.held = seq, wait > 0
	return st, nil
}

// errNotAPoll: the reply is JSON, but not a poll's object.
var errNotAPoll = errors.New("not a JSON object with items")

// decodeState reads a poll's state from r one item at a time, so that a
// poll of a few MiB is never held whole as bytes beside its decoded
// items; items past MaxItems are read and dropped.
func decodeState(r io.Reader) (State, error) {
	dec := json.NewDecoder(r)
	var st State
	if t, err := dec.Token(); err != nil {
		return st, err
	} else if t != json.Delim('{') {
		return st, errNotAPoll
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return st, err
		}
		var field any
		switch key, _ := t.(string); key {
		case "items":
			if err := decodeItems(dec, &st.Items); err != nil {
				return st, err
			}
			continue
		case "protocol":
			field = &st.Protocol
		case "instance":
			field = &st.Instance
		case "cursor":
			field = &st.Cursor
		case "recent":
			field = &st.Recent
		case "watchers":
			field = &st.Watchers
		default:
			field = new(json.RawMessage)
		}
		if err := dec.Decode(field); err != nil {
			return st, err
		}
	}
	_, err := dec.Token() // the closing brace
	return st, err
}

// decodeItems reads a poll's items (null: none), keeping MaxItems.
func decodeItems(dec *json.Decoder, items *[]Item) error {
	t, err := dec.Token()
	switch {
	case err != nil:
		return err
	case t == nil:
		return nil
	case t != json.Delim('['):
		return errNotAPoll
	}
	for dec.More() {
		var it Item
		if err := dec.Decode(&it); err != nil {
			return err
		}
		if len(*items) < MaxItems {
			*items = append(*items, it)
		}
	}
	_, err = dec.Token() // the closing bracket
	return err
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
func (c *Client) apply(st State, l *source.Link) {
	now := c.cfg.Clock.Now()
	c.mu.Lock()
	oldInst := c.instance
	restarted := oldInst != "" && oldInst != st.Instance
	var gone []Item
	if restarted {
		for _, it := range c.known {
			if _, ok := c.unsure[it.ID]; !ok {
				gone = append(gone, it)
			}
		}
		c.known = map[string]Item{}
	}
	seen := make(map[string]int, len(st.Items)) // index in st.Items
	var arrived []int
	for i, it := range st.Items {
		if _, dup := seen[it.ID]; it.ID == "" || dup {
			continue
		}
		seen[it.ID] = i
		if _, ok := c.known[it.ID]; !ok {
			c.known[it.ID] = kept(it)
			arrived = append(arrived, i)
		}
	}
	recent := make(map[string]Ended, len(st.Recent))
	for _, e := range st.Recent {
		recent[e.ID] = e
	}
	for id, it := range c.known {
		if _, ok := seen[id]; ok {
			continue
		}
		delete(c.known, id)
		c.rememberLocked(it)
		if out, busy := c.answering[id]; busy && !restarted {
			*out = recent[id]
			out.ID, out.Outcome = id, firstOf(out.Outcome, "gone")
			continue
		}
		if _, ok := c.unsure[id]; ok {
			continue // settled below
		}
		gone = append(gone, it)
	}
	settle := c.settleUnsureLocked(st, seen, recent, restarted)
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
		c.end(inst, it, e, why, now)
	}
	for _, f := range settle {
		f(now)
	}
	for _, i := range arrived {
		c.arrive(st.Instance, st.Items[i], now)
		// Delivered: the poll's copy of its command is let go at once (a
		// churning route sends megabytes a poll).
		st.Items[i].Command = ""
	}
	l.Up(func(s *source.Status) {
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

// end reports that a request or notice left the poll, with what the
// route recorded of it (e; its Outcome may be empty) or why.
func (c *Client) end(instance string, it Item, e Ended, why string, now time.Time) {
	if it.Kind == "notice" {
		c.notice(source.EventWaitingElsewhereEnd, it, firstOf(e.Outcome, firstOf(why, "gone")), now)
		return
	}
	if c.cfg.OnEvent == nil {
		return
	}
	reason := why
	if reason == "" {
		reason = cancelReason(e.Outcome)
	}
	p := wire.CancelPayload{ID: it.ID, Method: "approval", Reason: reason}
	if e.Outcome == "answered" && why == "" && e.By != "" {
		// The route names who answered: this Herald (its client id) or
		// another client.
		p.Answered, p.Choice = wire.AnsweredElsewhere, e.Choice
		if e.By == c.cfg.ClientID {
			p.Answered = wire.AnsweredHere
		}
	}
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

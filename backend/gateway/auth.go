package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/herald-desktop/herald/backend/source"
)

// Subprotocols of the gated-mode WebSocket upgrade.
const (
	SubprotocolV1     = "hermes-gateway-v1"
	TicketPrefix      = "hermes-gateway-ticket."
	maxRESTBody       = 1 << 20
	passwordLoginPath = "/auth/password-login"
	wsTicketPath      = "/api/auth/ws-ticket"
	statusPath        = "/api/status"
)

// GatewayInfo is what GET /api/status says about authentication.
type GatewayInfo struct {
	Version       string   `json:"version"`
	AuthRequired  bool     `json:"auth_required"`
	AuthProviders []string `json:"-"`
	AuthFlows     []string `json:"-"`
}

// authState holds the HTTP client (with its cookie jar) and the gated-mode
// sign-in state. Secrets live only in memory here.
type authState struct {
	c        *Client
	mu       sync.Mutex
	http     *http.Client
	tr       *http.Transport
	jar      http.CookieJar
	loggedIn bool
}

func newAuthState(c *Client) *authState {
	jar, _ := cookiejar.New(nil)
	a := &authState{c: c, jar: jar}
	// The one construction every transport uses (no redirects); the
	// WebSocket dialer dials, verifies and proxies as it does.
	a.tr = source.NewHTTPTransport(c.httpOptions())
	a.http = source.NewHTTPClient(source.HTTPOptions{Transport: a.tr, Jar: jar, Timeout: DialTimeout})
	return a
}

// httpOptions are the client's choices for source.NewHTTPClient.
func (c *Client) httpOptions() source.HTTPOptions {
	return source.HTTPOptions{RootCAs: c.cfg.RootCAs, DialContext: c.cfg.DialContext}
}

func (a *authState) reset() {
	a.mu.Lock()
	a.loggedIn = false
	jar, _ := cookiejar.New(nil)
	a.jar = jar
	a.http = source.NewHTTPClient(source.HTTPOptions{Transport: a.tr, Jar: jar, Timeout: DialTimeout})
	a.mu.Unlock()
}

// client is the HTTP client and its cookie jar (replaced by reset).
func (a *authState) client() (*http.Client, http.CookieJar) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.http, a.jar
}

func (c *Client) creds() (token, user, pass string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Token, c.cfg.Username, c.cfg.Password
}

// Probe fetches GET /api/status to learn whether the gateway wants a
// sign-in. It works without credentials.
func (c *Client) Probe(ctx context.Context) (GatewayInfo, error) {
	var raw struct {
		Version       string          `json:"version"`
		AuthRequired  bool            `json:"auth_required"`
		AuthProviders json.RawMessage `json:"auth_providers"`
		AuthFlows     json.RawMessage `json:"auth_flows"`
	}
	if err := c.auth.doJSON(ctx, http.MethodGet, statusPath, nil, &raw); err != nil {
		return GatewayInfo{}, err
	}
	return GatewayInfo{
		Version:       raw.Version,
		AuthRequired:  raw.AuthRequired,
		AuthProviders: names(raw.AuthProviders),
		AuthFlows:     names(raw.AuthFlows),
	}, nil
}

// names reads a list that may be strings or objects with a name/id/type.
func names(raw json.RawMessage) []string {
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		return ss
	}
	var objs []map[string]any
	if json.Unmarshal(raw, &objs) == nil {
		for _, o := range objs {
			for _, k := range []string{"name", "id", "type", "flow"} {
				if v, ok := o[k].(string); ok {
					ss = append(ss, v)
					break
				}
			}
		}
		return ss
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		for k := range m {
			ss = append(ss, k)
		}
	}
	return ss
}

// httpError is a REST failure with the gateway's own message.
type httpError struct {
	Status int
	Path   string
	Msg    string
}

func (e *httpError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("%s answered HTTP %d: %s", e.Path, e.Status, e.Msg)
	}
	return fmt.Sprintf("%s answered HTTP %d", e.Path, e.Status)
}

func (a *authState) doJSON(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.c.target.endpoint(path), rd)
	if err != nil {
		return err
	}
	for k, vs := range a.c.cfg.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Del("Origin")
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc, _ := a.client()
	resp, err := hc.Do(req)
	if err != nil {
		return describeNetErr(a.c.target.base.Host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxRESTBody))
	if source.RedirectStatus(resp.StatusCode) {
		return &ConfigError{Status: resp.StatusCode, Msg: peer.RedirectText(a.c.target.base.Host, resp.StatusCode)}
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{Status: resp.StatusCode, Path: path, Msg: errorMessage(b)}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s did not answer JSON (is %s a Hermes dashboard?): %v", path, a.c.target.base, err)
		}
	}
	return nil
}

// errorMessage extracts a human message from an error body.
func errorMessage(b []byte) string {
	var e struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		Msg    string          `json:"message"`
	}
	if json.Unmarshal(b, &e) == nil {
		for _, raw := range []json.RawMessage{e.Error, e.Detail} {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return s
			}
			var o struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(raw, &o) == nil && o.Message != "" {
				return o.Message
			}
		}
		if e.Msg != "" {
			return e.Msg
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// login signs in with the password (gated mode), once per credential set.
func (a *authState) login(ctx context.Context) error {
	a.mu.Lock()
	done := a.loggedIn
	a.mu.Unlock()
	if done {
		return nil
	}
	_, user, pass := a.c.creds()
	body := map[string]string{"password": pass}
	if user != "" {
		body["username"] = user
	}
	err := a.doJSON(ctx, http.MethodPost, passwordLoginPath, body, nil)
	var he *httpError
	if errors.As(err, &he) && (he.Status == 401 || he.Status == 403) {
		return &AuthError{Status: he.Status, Msg: "the gateway refused the password (HTTP " + fmt.Sprint(he.Status) + "): check it and sign in again"}
	}
	if err != nil {
		return fmt.Errorf("signing in failed: %w", err)
	}
	a.mu.Lock()
	a.loggedIn = true
	a.mu.Unlock()
	return nil
}

// ticket mints a fresh single-use WebSocket ticket, signing in again once
// if the session cookie has expired.
func (a *authState) ticket(ctx context.Context) (string, error) {
	for try := 0; try < 2; try++ {
		if err := a.login(ctx); err != nil {
			return "", err
		}
		var r struct {
			Ticket string `json:"ticket"`
		}
		err := a.doJSON(ctx, http.MethodPost, wsTicketPath, struct{}{}, &r)
		var he *httpError
		if errors.As(err, &he) && (he.Status == 401 || he.Status == 403) {
			a.mu.Lock()
			a.loggedIn = false
			a.mu.Unlock()
			continue
		}
		if err != nil {
			return "", fmt.Errorf("getting a WebSocket ticket failed: %w", err)
		}
		if r.Ticket == "" {
			return "", errors.New("the gateway returned an empty WebSocket ticket")
		}
		return r.Ticket, nil
	}
	return "", &AuthError{Status: 401, Msg: "the gateway keeps refusing Herald's sign-in session: sign in again"}
}

// dial opens the WebSocket, choosing the auth mode from the credentials.
func (c *Client) dial(ctx context.Context) (*websocket.Conn, error) {
	token, _, pass := c.creds()
	u := *c.target.ws
	var protocols []string
	switch {
	case token != "":
		q := u.Query()
		q.Set("token", token)
		u.RawQuery = q.Encode()
	case pass != "":
		t, err := c.auth.ticket(ctx)
		if err != nil {
			return nil, err
		}
		protocols = []string{SubprotocolV1, TicketPrefix + t}
	default:
		info, err := c.Probe(ctx)
		if err == nil && info.AuthRequired {
			return nil, &AuthError{Msg: "this gateway requires sign-in: give Herald its password"}
		}
	}
	// Dialled, verified and proxied as the HTTP client (a loopback name
	// stays on loopback); the dialer follows no redirect either.
	tr := c.auth.tr
	_, jar := c.auth.client()
	d := websocket.Dialer{
		NetDialContext:   tr.DialContext,
		TLSClientConfig:  tr.TLSClientConfig,
		HandshakeTimeout: DialTimeout,
		Subprotocols:     protocols,
		Proxy:            tr.Proxy,
		Jar:              jar,
	}
	h := http.Header{}
	for k, vs := range c.cfg.Header {
		if strings.EqualFold(k, "Origin") {
			continue // Herald never sends a foreign Origin
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	ws, resp, err := d.DialContext(ctx, u.String(), h)
	if err != nil {
		return nil, c.describeDialErr(resp, err, token != "", token == "" && pass == "")
	}
	return ws, nil
}

func (c *Client) describeDialErr(resp *http.Response, err error, tokenMode, noSecret bool) error {
	if resp != nil {
		defer resp.Body.Close()
		if source.RedirectStatus(resp.StatusCode) {
			return &ConfigError{Status: resp.StatusCode, Msg: peer.RedirectText(c.target.base.Host, resp.StatusCode)}
		}
		switch resp.StatusCode {
		case 401, 403:
			if noSecret {
				return &AuthError{Status: resp.StatusCode, Msg: fmt.Sprintf("the gateway wants the dashboard's session token and Herald has none (HTTP %d): start the dashboard with HERMES_DASHBOARD_SESSION_TOKEN set and give Herald the same token", resp.StatusCode)}
			}
			if tokenMode {
				return &AuthError{Status: resp.StatusCode, Msg: fmt.Sprintf("the gateway refused the connection (HTTP %d): the session token is wrong or expired, or the gateway does not allow this host; copy a fresh token from the Hermes dashboard", resp.StatusCode)}
			}
			return &AuthError{Status: resp.StatusCode, Msg: fmt.Sprintf("the gateway refused the connection (HTTP %d): sign in again", resp.StatusCode)}
		case 404:
			return &ConfigError{Status: 404, Msg: fmt.Sprintf("%s has no /api/ws endpoint (HTTP 404): point Herald at the Hermes dashboard (default port %s)", c.target.base, DefaultPort)}
		}
		if body, _ := io.ReadAll(io.LimitReader(resp.Body, 512)); source.HTTPSOnly(resp.StatusCode, string(body)) {
			return &ConfigError{Status: resp.StatusCode, Msg: peer.HTTPSOnlyText(c.target.base.Host)}
		}
		return fmt.Errorf("the gateway refused the WebSocket upgrade (HTTP %d)", resp.StatusCode)
	}
	return describeNetErr(c.target.base.Host, err)
}

// peer is how messages name the gateway and the advice to reach it.
var peer = source.Peer{Name: "the gateway", Reach: "check the address and that Hermes is running", Is: "a Hermes dashboard gateway"}

// describeNetErr turns transport errors into advice.
func describeNetErr(host string, err error) error { return peer.DescribeNetErr(host, err) }

package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/source"
)

// Sentinel errors an *APIError matches with errors.Is, by HTTP status.
var (
	// ErrUnauthorized: HTTP 401, the API server refused the key.
	ErrUnauthorized = errors.New("the API server refused the key")
	// ErrForbidden: HTTP 403, usually a browser-style Origin header or a
	// host the server does not accept.
	ErrForbidden = errors.New("the API server refused the request")
	// ErrNotFound: HTTP 404 (run_not_found and unknown paths).
	ErrNotFound = errors.New("not found on the API server")
	// ErrRateLimited: HTTP 429, too many concurrent runs or requests.
	ErrRateLimited = errors.New("the API server is rate limiting Herald")
	// ErrTooLarge: HTTP 413, the request body is too large.
	ErrTooLarge = errors.New("the request is too large for the API server")
	// ErrUnavailable: HTTP 503 (draining, starting, overloaded) and 502/504.
	ErrUnavailable = errors.New("the API server is unavailable")
	// ErrApprovalNotPending matches *ApprovalNotPendingError.
	ErrApprovalNotPending = errors.New("no approval is pending for this run")
)

// ErrNotRunning is returned by calls that need Run to be active.
var ErrNotRunning = errors.New("the API server client is not running; start it with Run first")

// APIError is a refusal from the API server, decoded from its
// {"error":{"message","type","code"}} envelope (or a plain string body).
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the machine code ("invalid_api_key", "run_not_found",
	// "rate_limit_exceeded", ...), when the server gave one.
	Code string
	// Type is the error type ("invalid_request_error", "rate_limit_error").
	Type string
	// Message is the server's own message, with Herald's key removed.
	Message string
	// Method and Path are the request that failed.
	Method, Path string
	// RetryAfter is the delay the server asked for (Retry-After), or zero.
	RetryAfter time.Duration
}

// Error says what happened and what to do about it.
func (e *APIError) Error() string {
	what := fmt.Sprintf("%s %s answered HTTP %d", e.Method, e.Path, e.Status)
	detail := e.Message
	if e.Code != "" {
		if detail != "" {
			detail += " (" + e.Code + ")"
		} else {
			detail = e.Code
		}
	}
	if detail != "" {
		what += ": " + detail
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		return what + "; the key is wrong or missing: copy API_SERVER_KEY (at least 16 characters) from Hermes' ~/.hermes/.env into Herald's settings"
	case e.Status == http.StatusForbidden:
		return what + "; the API server refuses browser-style requests and unknown hosts: check that no proxy adds an Origin header and that Herald points at the address Hermes listens on"
	case e.Status == http.StatusTooManyRequests:
		if e.RetryAfter > 0 {
			return what + fmt.Sprintf("; Hermes is at its limit of concurrent runs: Herald retries in %s, or wait for a run to finish", e.RetryAfter.Round(time.Second))
		}
		return what + "; Hermes is at its limit of concurrent runs: wait for a run to finish or raise gateway.api_server.max_concurrent_runs"
	case e.Status == http.StatusRequestEntityTooLarge:
		return what + "; shorten the input or attachments and try again"
	case e.Status == http.StatusServiceUnavailable || e.Status == http.StatusBadGateway || e.Status == http.StatusGatewayTimeout:
		return what + "; Hermes is starting, shutting down or overloaded: Herald retries, or check `hermes gateway status`"
	case e.Status == http.StatusNotFound && e.Code == "run_not_found":
		return what + "; the run finished and expired, or belongs to another key"
	case e.Status == http.StatusNotFound:
		return what + "; is this a Hermes API server (default port 8642) with the API server platform enabled?"
	}
	return what
}

// Is matches the sentinel errors by status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized, source.ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrTooLarge:
		return e.Status == http.StatusRequestEntityTooLarge
	case ErrUnavailable:
		return e.Status == http.StatusServiceUnavailable || e.Status == http.StatusBadGateway || e.Status == http.StatusGatewayTimeout
	}
	return false
}

// temporary reports whether retrying the same request later may succeed
// and the server did not act on it (429, 502, 503, 504).
func (e *APIError) temporary() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// ApprovalNotPendingError is the 409 answer to an approval when nothing is
// waiting: the approval was resolved elsewhere (another client, Hermes'
// own chat), it expired, or the run has finished. Nothing was approved.
type ApprovalNotPendingError struct {
	// RunID is the run the answer was for.
	RunID string
	// Code is "approval_not_pending" (the run is alive, nothing is
	// waiting) or "approval_not_active" (the run has no approval session
	// any more: it finished or was stopped).
	Code string
	// Message is the server's message.
	Message string
}

// Error says what happened and what to do.
func (e *ApprovalNotPendingError) Error() string {
	if e.Code == "approval_not_active" {
		return fmt.Sprintf("run %s is no longer waiting for approvals (it finished or was stopped); nothing was approved", e.RunID)
	}
	return fmt.Sprintf("run %s has no pending approval: it was answered elsewhere or timed out; nothing was approved", e.RunID)
}

// Is matches ErrApprovalNotPending.
func (e *ApprovalNotPendingError) Is(target error) bool { return target == ErrApprovalNotPending }

// ConfigError is a configuration problem found before talking to Hermes.
type ConfigError struct {
	// Msg says what is wrong and how to fix it.
	Msg string
}

// Error returns Msg.
func (e *ConfigError) Error() string { return e.Msg }

// decodeAPIError builds an *APIError from a non-2xx response body.
func decodeAPIError(method, path string, status int, h http.Header, body []byte, now time.Time, secret string) *APIError {
	e := &APIError{Status: status, Method: method, Path: path}
	var env struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		Msg    string          `json:"message"`
	}
	if json.Unmarshal(body, &env) == nil {
		var s string
		var o struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		switch {
		case json.Unmarshal(env.Error, &s) == nil && s != "":
			e.Message = s
		case json.Unmarshal(env.Error, &o) == nil && (o.Message != "" || o.Code != nil):
			e.Message, e.Type = o.Message, o.Type
			switch c := o.Code.(type) {
			case string:
				e.Code = c
			case float64:
				e.Code = strconv.FormatFloat(c, 'f', -1, 64)
			}
		case json.Unmarshal(env.Detail, &s) == nil && s != "":
			e.Message = s
		case env.Msg != "":
			e.Message = env.Msg
		}
	}
	if e.Message == "" && e.Code == "" {
		e.Message = strings.TrimSpace(string(body))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "..."
		}
	}
	if secret != "" {
		e.Message = strings.ReplaceAll(e.Message, secret, "[key]")
	}
	e.RetryAfter = parseRetryAfter(h.Get("Retry-After"), now)
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 || n != n {
			return 0
		}
		if n > 24*3600 {
			n = 24 * 3600
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// peer is how messages name the API server and the advice to reach it.
var peer = source.Peer{Name: "the API server", Reach: "check the address (default 127.0.0.1:8642) and that the Hermes gateway runs with API_SERVER_ENABLED=true", Is: "a Hermes API server"}

// describeNetErr turns transport errors into advice. It never includes
// request headers, so the key cannot leak through it.
func describeNetErr(host string, err error) error { return peer.DescribeNetErr(host, err) }

package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
)

// retryPolicy says which failures of a request may be retried.
type retryPolicy int

const (
	// retryNever: one attempt.
	retryNever retryPolicy = iota
	// retryUnsent: only failures where the server certainly did not act
	// (could not connect; 429, 502, 503, 504). For requests that must not
	// run twice, like an approval answer.
	retryUnsent
	// retryAmbiguous: also failures after the request was sent (reset
	// connection, lost answer). For reads, and for starts protected by an
	// Idempotency-Key.
	retryAmbiguous
)

// send performs one HTTP request. A non-2xx answer becomes an *APIError
// (its body read and closed); a 2xx answer is returned open.
func (c *Client) send(ctx context.Context, method, path string, body []byte, hdr http.Header) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return nil, &ConfigError{Msg: fmt.Sprintf("cannot build a request for %s: %v", path, err)}
	}
	if body != nil {
		// No GetBody: net/http would replay a request with a body and an
		// Idempotency-Key by itself when a reused connection breaks, even
		// to a server that ignores the key (a second run or answer).
		// Retries are call's alone, by its policy.
		req.GetBody = nil
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range c.cfg.Header {
		if strings.EqualFold(k, "Origin") || strings.EqualFold(k, "Authorization") {
			continue // Herald never sends an Origin; the key comes from Key
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	for k, vs := range hdr {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if key := c.currentKey(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Del("Origin")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, describeNetErr(c.base.Host, err)
	}
	if source.RedirectStatus(resp.StatusCode) {
		resp.Body.Close()
		return nil, peer.Redirected(c.base.Host, resp.StatusCode)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		return nil, decodeAPIError(method, path, resp.StatusCode, resp.Header, b, c.clk.Now(), c.currentKey())
	}
	return resp, nil
}

// call performs a JSON request with retries under policy and decodes a
// 2xx answer into out (which may be nil). It returns the answer's headers.
func (c *Client) call(ctx context.Context, method, path string, body any, out any, hdr http.Header, policy retryPolicy) (http.Header, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encoding the request for %s failed: %w", path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		h, err := c.callOnce(ctx, method, path, raw, out, hdr)
		if err == nil {
			if path != healthPath { // keyless: it says nothing about the key
				c.markOK()
			}
			return h, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ae *APIError
		isAPI := errors.As(err, &ae)
		if isAPI && ae.Status == http.StatusUnauthorized {
			c.refused(err)
			return nil, err
		}
		retry := false
		var ce *ConfigError
		switch {
		case policy == retryNever, errors.As(err, &ce), source.IsRedirect(err):
		case isAPI:
			// An answer is retried only after a status that says the
			// server did not act (429, 503): after a 502 or 504 it may
			// have (source.NotActed).
			retry = ae.temporary() && (policy != retryUnsent || source.NotActed(ae.Status))
		case isUnsent(err):
			retry = true
		case policy == retryAmbiguous && !isDecodeErr(err):
			retry = true
		}
		if !retry || attempt >= c.cfg.MaxRetries {
			return nil, err
		}
		if isAPI && ae.RetryAfter > c.cfg.MaxRetryAfter {
			return nil, err // the server wants longer than Herald waits
		}
		d := c.delay(attempt, ae, 0)
		c.log.Info("API server request failed; retrying", "method", method, "path", path, "err", err, "in", d)
		if !c.sleep(ctx, d, err.Error(), attempt+1) {
			return nil, ctx.Err()
		}
	}
}

func (c *Client) callOnce(ctx context.Context, method, path string, raw []byte, out any, hdr http.Header) (http.Header, error) {
	source.ResetWrites(ctx) // this attempt's write is what counts
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.send(cctx, method, path, raw, hdr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading the answer to %s %s failed: %w", method, path, err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return nil, &decodeError{fmt.Errorf("%s %s did not answer JSON (is %s a Hermes API server?): %v", method, path, c.base, err)}
		}
	}
	return resp.Header, nil
}

// decodeError is an answer that arrived but was not what Hermes sends;
// retrying will not help.
type decodeError struct{ error }

func (e *decodeError) Unwrap() error { return e.error }

func isDecodeErr(err error) bool {
	var de *decodeError
	return errors.As(err, &de)
}

func isUnsent(err error) bool {
	var de *source.DialError
	return errors.As(err, &de)
}

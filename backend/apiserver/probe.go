package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/herald-desktop/herald/backend/source"
)

// ServerInfo is what GET /health and GET /v1/capabilities said. Every
// feature is optional: an absent flag reads as false, and an older server
// without /v1/capabilities yields HasCapabilities false.
type ServerInfo struct {
	// Status is /health's status ("ok").
	Status string `json:"status"`
	// Platform is "hermes-agent" for Hermes.
	Platform string `json:"platform"`
	// Version is the Hermes version.
	Version string `json:"version"`
	// HasCapabilities is false when /v1/capabilities does not exist.
	HasCapabilities bool `json:"has_capabilities"`
	// AuthRequired and AuthType come from capabilities.auth.
	AuthRequired bool   `json:"auth_required"`
	AuthType     string `json:"auth_type,omitempty"` // "bearer"
	// Features holds capabilities.features as sent (bools, strings, ...).
	Features map[string]json.RawMessage `json:"features,omitempty"`
	// Endpoints maps endpoint names to their method and path.
	Endpoints map[string]Endpoint `json:"endpoints,omitempty"`
	// Idempotency is capabilities.idempotency on servers that describe it.
	Idempotency *IdempotencyInfo `json:"idempotency,omitempty"`
}

// Endpoint is one entry of capabilities.endpoints.
type Endpoint struct {
	Method string `json:"method"` // GET, POST, ...
	Path   string `json:"path"`   // e.g. /v1/runs/{run_id}/events
}

// IdempotencyInfo describes the server's Idempotency-Key support.
type IdempotencyInfo struct {
	Supported        bool  `json:"supported"`         // the key is honoured on POST /v1/runs
	Durable          bool  `json:"durable"`           // keys survive a server restart
	RetentionSeconds int64 `json:"retention_seconds"` // how long a key is remembered
}

// Feature reports whether a capabilities feature flag is present and
// true. Unknown or non-boolean flags read as false.
func (i ServerInfo) Feature(name string) bool {
	var b bool
	return json.Unmarshal(i.Features[name], &b) == nil && b
}

// featureOff reports whether the last probe saw a feature flag present
// and false. An absent flag is not off: every feature is optional.
func (c *Client) featureOff(name string) bool {
	c.mu.Lock()
	raw, ok := c.feat.Features[name]
	c.mu.Unlock()
	var b bool
	return ok && json.Unmarshal(raw, &b) == nil && !b
}

// FeatureString returns a string-valued feature (such as
// session_continuity_header), or "".
func (i ServerInfo) FeatureString(name string) string {
	return jsonString(i.Features[name])
}

func (i ServerInfo) featureStatus() FeatureStatus {
	return FeatureStatus{
		RunSubmission:  i.Feature("run_submission"),
		RunEvents:      i.Feature("run_events_sse"),
		RunApproval:    i.Feature("run_approval_response"),
		RunStop:        i.Feature("run_stop"),
		ApprovalEvents: i.Feature("approval_events"),
		Idempotency:    i.Idempotency != nil && i.Idempotency.Supported,
	}
}

// healthPath is the API server's keyless health check: its answer never
// says the key is right.
const healthPath = "/health"

// Probe asks GET /health (no key needed) and GET /v1/capabilities, which
// needs the key. A refused key is an error matching ErrUnauthorized; a
// server without /v1/capabilities is not an error, but then GET /v1/models
// checks the key, so a refused key is never "connected".
func (c *Client) Probe(ctx context.Context) (ServerInfo, error) {
	var info ServerInfo
	var h struct {
		Status   string `json:"status"`
		Platform string `json:"platform"`
		Version  string `json:"version"`
	}
	_, err := c.call(ctx, http.MethodGet, healthPath, nil, &h, nil, retryNever)
	var ae *APIError
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return info, &ConfigError{Msg: fmt.Sprintf("%s has no /health endpoint: point Herald at the Hermes API server (API_SERVER_ENABLED=true, default port 8642), not the dashboard", c.base)}
	case errors.As(err, &ae) && source.HTTPSOnly(ae.Status, ae.Message):
		return info, &ConfigError{Msg: peer.HTTPSOnlyText(c.base.Host)}
	case err != nil:
		return info, err
	}
	info.Status, info.Platform, info.Version = h.Status, h.Platform, h.Version
	if info.Platform != "" && info.Platform != "hermes-agent" {
		c.log.Warn("the API server does not say it is Hermes", "platform", info.Platform)
	}

	var caps struct {
		Auth struct {
			Type     string `json:"type"`
			Required bool   `json:"required"`
		} `json:"auth"`
		Features    map[string]json.RawMessage `json:"features"`
		Endpoints   map[string]Endpoint        `json:"endpoints"`
		Idempotency *IdempotencyInfo           `json:"idempotency"`
	}
	_, err = c.call(ctx, http.MethodGet, "/v1/capabilities", nil, &caps, nil, retryNever)
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		// Older server: every feature unknown. Check the key on a route
		// that needs it.
		_, err = c.call(ctx, http.MethodGet, "/v1/models", nil, nil, nil, retryNever)
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return info, nil
		}
		return info, err
	case err != nil:
		return info, err
	}
	info.HasCapabilities = true
	info.AuthRequired, info.AuthType = caps.Auth.Required, caps.Auth.Type
	info.Features, info.Endpoints, info.Idempotency = caps.Features, caps.Endpoints, caps.Idempotency
	if info.Idempotency == nil {
		// Some builds list it among the features instead.
		var idem IdempotencyInfo
		if raw, ok := info.Features["idempotency"]; ok && json.Unmarshal(raw, &idem) == nil {
			info.Idempotency = &idem
		}
	}
	return info, nil
}

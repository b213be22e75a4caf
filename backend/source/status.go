package source

import "time"

// State is a source's connection state.
type State string

// States a source moves through. A transport uses the ones that apply
// (the API server never syncs).
const (
	StateIdle         State = "idle"         // not started
	StateConnecting   State = "connecting"   // dialing, probing or waiting for the server's hello
	StateSyncing      State = "syncing"      // connected; re-attaching sessions and replaying
	StateConnected    State = "connected"    // live
	StateReconnecting State = "reconnecting" // waiting out a backoff delay
	StateAuthFailed   State = "auth_failed"  // credentials refused; waits for the user
	StateConfigError  State = "config_error" // refused for a reason retrying cannot fix
	StateStopped      State = "stopped"      // Run returned
)

// NeedsUser reports whether the state waits for the user (credentials or
// configuration) rather than for the network.
func (s State) NeedsUser() bool { return s == StateAuthFailed || s == StateConfigError }

// Status is a snapshot of one source's channel, for people and UIs, in
// the same terms for every transport.
type Status struct {
	Gateway string `json:"gateway"`
	// Kind is the transport ("ws", "api", ...).
	Kind  string `json:"kind,omitempty"`
	State State  `json:"state"`
	// Err says, for people, why the channel is not connected.
	Err         string    `json:"error,omitempty"`
	Attempt     int       `json:"attempt"`
	NextRetry   time.Time `json:"next_retry,omitzero"`
	ConnectedAt time.Time `json:"connected_at,omitzero"`
	Dials       int       `json:"dials"`
	Epoch       string    `json:"epoch,omitempty"`
	// Version is the server's Hermes version when it says.
	Version  string        `json:"version,omitempty"`
	Features FeatureStatus `json:"features"`
	// MayHaveMissedEvents is set when the server cannot replay what was
	// sent while Herald was disconnected (or replay was truncated): the
	// views may be stale and should be refreshed.
	MayHaveMissedEvents bool   `json:"may_have_missed_events"`
	MissedReason        string `json:"missed_reason,omitempty"`
	InvalidFrames       int    `json:"invalid_frames,omitempty"`
	// Sessions counts the followed sessions (runs, for the API server).
	Sessions int `json:"sessions"`
}

// FeatureStatus is what the server turned out to support (the dashboard
// gateway's handshake features; all false where a transport has none).
type FeatureStatus struct {
	Ping           bool `json:"ping"`
	Capabilities   bool `json:"capabilities"`
	Replay         bool `json:"replay"`
	ServerRequests bool `json:"server_requests"`
	// Delivery says to whom the server sends a session's events, decided
	// from what it says and answers on this connection (never from a
	// version); DeliveryText says it for people and DeliveryEvidence
	// why Herald thinks so.
	Delivery         Delivery `json:"delivery,omitempty"`
	DeliveryText     string   `json:"delivery_text,omitempty"`
	DeliveryEvidence string   `json:"delivery_evidence,omitempty"`
	// ApprovalPending and RequestAnswer: the methods exist (probed).
	ApprovalPending bool `json:"approval_pending"`
	RequestAnswer   bool `json:"request_answer"`
	// Advertised lists gateway.ready's capabilities; Protocol is its
	// protocol version; SharedSession: it advertised shared_session.
	Advertised    string `json:"advertised,omitempty"`
	Protocol      int    `json:"protocol,omitempty"`
	SharedSession bool   `json:"shared_session,omitempty"`
}

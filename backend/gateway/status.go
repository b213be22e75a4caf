package gateway

import "time"

// State is the channel's connection state.
type State string

// States a client moves through.
const (
	StateIdle         State = "idle"         // not started
	StateConnecting   State = "connecting"   // dialing or waiting for gateway.ready
	StateSyncing      State = "syncing"      // connected; re-attaching sessions and replaying
	StateConnected    State = "connected"    // live
	StateReconnecting State = "reconnecting" // waiting out a backoff delay
	StateAuthFailed   State = "auth_failed"  // credentials refused; waits for the user
	StateConfigError  State = "config_error" // refused for a reason retrying cannot fix
	StateStopped      State = "stopped"      // Run returned
)

// Status is a snapshot of one gateway's channel, for people and UIs.
type Status struct {
	Gateway string `json:"gateway"`
	// Kind is the transport ("ws"; "api" for an API server shown in the
	// same terms), filled in by the service.
	Kind  string `json:"kind,omitempty"`
	State State  `json:"state"`
	// Err says, for people, why the channel is not connected.
	Err         string    `json:"error,omitempty"`
	Attempt     int       `json:"attempt"`
	NextRetry   time.Time `json:"next_retry,omitzero"`
	ConnectedAt time.Time `json:"connected_at,omitzero"`
	Dials       int       `json:"dials"`
	Epoch       string    `json:"epoch,omitempty"`
	// Version is the gateway's Hermes version when it says.
	Version  string        `json:"version,omitempty"`
	Features FeatureStatus `json:"features"`
	// MayHaveMissedEvents is set when the gateway cannot replay what was
	// sent while Herald was disconnected (or replay was truncated): the
	// views may be stale and should be refreshed.
	MayHaveMissedEvents bool   `json:"may_have_missed_events"`
	MissedReason        string `json:"missed_reason,omitempty"`
	InvalidFrames       int    `json:"invalid_frames,omitempty"`
	Sessions            int    `json:"sessions"`
}

// FeatureStatus is what the gateway turned out to support.
type FeatureStatus struct {
	Ping           bool `json:"ping"`
	Capabilities   bool `json:"capabilities"`
	Replay         bool `json:"replay"`
	ServerRequests bool `json:"server_requests"`
}

// Status returns the current snapshot.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.status
	s.Sessions = len(c.sessions)
	return s
}

func (c *Client) setStatus(fn func(*Status)) {
	c.mu.Lock()
	fn(&c.status)
	s := c.status
	s.Sessions = len(c.sessions)
	c.mu.Unlock()
	if c.cfg.OnStatus != nil {
		c.cfg.OnStatus(s)
	}
}

package gateway

import "github.com/herald-desktop/herald/backend/source"

// Kind is the transport's name in settings, flags and Status.Kind.
const Kind source.Kind = "ws"

// The channel's state and status are the contract's (package source);
// these names remain for callers that still spell them gateway.X.
type (
	State         = source.State
	Status        = source.Status
	FeatureStatus = source.FeatureStatus
	Backoff       = source.Backoff
)

// States a client moves through.
const (
	StateIdle         = source.StateIdle
	StateConnecting   = source.StateConnecting
	StateSyncing      = source.StateSyncing
	StateConnected    = source.StateConnected
	StateReconnecting = source.StateReconnecting
	StateAuthFailed   = source.StateAuthFailed
	StateConfigError  = source.StateConfigError
	StateStopped      = source.StateStopped
)

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

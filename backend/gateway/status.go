package gateway

import "github.com/herald-desktop/herald/backend/source"

// Kind is the transport's name in settings, flags and Status.Kind.
const Kind source.Kind = "ws"

// The channel's state and status, session ownership events, live
// statuses and listings are the contract's (package source); the client
// speaks of them by these names, and code outside this package by
// source's.
type (
	State            = source.State
	Status           = source.Status
	FeatureStatus    = source.FeatureStatus
	Backoff          = source.Backoff
	LiveSession      = source.LiveSession
	Discovery        = source.Discovery
	ElsewherePayload = source.ElsewherePayload
)

const (
	StateIdle         = source.StateIdle
	StateConnecting   = source.StateConnecting
	StateSyncing      = source.StateSyncing
	StateConnected    = source.StateConnected
	StateReconnecting = source.StateReconnecting
	StateAuthFailed   = source.StateAuthFailed
	StateConfigError  = source.StateConfigError
	StateStopped      = source.StateStopped
	EventElsewhere    = source.EventElsewhere
	EventFollowed     = source.EventFollowed
	LiveIdle          = source.LiveIdle
	LiveWorking       = source.LiveWorking
	LiveWaiting       = source.LiveWaiting
	LiveStarting      = source.LiveStarting
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

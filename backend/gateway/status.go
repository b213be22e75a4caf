package gateway

import "github.com/herald-desktop/herald/backend/source"

// Kind is the transport's name in settings, flags and Status.Kind.
const Kind source.Kind = "ws"

// Status returns the current snapshot.
func (c *Client) Status() source.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.status
	s.Sessions = len(c.sessions)
	return s
}

func (c *Client) setStatus(fn func(*source.Status)) {
	c.mu.Lock()
	fn(&c.status)
	s := c.status
	s.Sessions = len(c.sessions)
	c.mu.Unlock()
	if c.cfg.OnStatus != nil {
		c.cfg.OnStatus(s)
	}
}

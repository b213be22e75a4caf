package gateway

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
)

// Pool runs one Client per gateway, each with its own connection, state
// and goroutines, and funnels their events and statuses to shared
// callbacks. Events of one gateway stay in order; callbacks may be called
// concurrently for different gateways.
type Pool struct {
	onEvent  func(wire.Event)
	onStatus func(source.Status)

	mu      sync.Mutex
	ctx     context.Context
	entries map[string]*poolEntry
	closed  bool
}

type poolEntry struct {
	c      *Client
	cancel context.CancelFunc
	done   chan struct{}
}

// NewPool returns a pool whose clients run under ctx.
func NewPool(ctx context.Context, onEvent func(wire.Event), onStatus func(source.Status)) *Pool {
	return &Pool{ctx: ctx, onEvent: onEvent, onStatus: onStatus, entries: map[string]*poolEntry{}}
}

// Add starts a client for cfg. Names must be unique within the pool.
func (p *Pool) Add(cfg Config) (*Client, error) {
	userEvent, userStatus := cfg.OnEvent, cfg.OnStatus
	cfg.OnEvent = func(ev wire.Event) {
		if userEvent != nil {
			userEvent(ev)
		}
		if p.onEvent != nil {
			p.onEvent(ev)
		}
	}
	cfg.OnStatus = func(s source.Status) {
		if userStatus != nil {
			userStatus(s)
		}
		if p.onStatus != nil {
			p.onStatus(s)
		}
	}
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if _, dup := p.entries[c.Name()]; dup {
		return nil, fmt.Errorf("a gateway named %q is already configured; pick another name", c.Name())
	}
	ctx, cancel := context.WithCancel(p.ctx)
	e := &poolEntry{c: c, cancel: cancel, done: make(chan struct{})}
	p.entries[c.Name()] = e
	go func() {
		defer close(e.done)
		c.Run(ctx)
	}()
	return c, nil
}

// Get returns the client of a gateway.
func (p *Pool) Get(name string) (*Client, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.entries[name]
	if !ok {
		return nil, false
	}
	return e.c, true
}

// Names lists the gateways, sorted.
func (p *Pool) Names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.entries))
	for n := range p.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Statuses returns every gateway's status, sorted by name.
func (p *Pool) Statuses() []source.Status {
	var out []source.Status
	for _, n := range p.Names() {
		if c, ok := p.Get(n); ok {
			out = append(out, c.Status())
		}
	}
	return out
}

// CheckLinks asks every client to check its link now (CheckLink): the
// network changed or the machine woke up.
func (p *Pool) CheckLinks() {
	for _, n := range p.Names() {
		if c, ok := p.Get(n); ok {
			c.CheckLink()
		}
	}
}

// Remove stops a gateway's client and waits for it.
func (p *Pool) Remove(name string) {
	p.mu.Lock()
	e, ok := p.entries[name]
	delete(p.entries, name)
	p.mu.Unlock()
	if ok {
		e.cancel()
		<-e.done
	}
}

// Close stops every client and waits for them.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	entries := p.entries
	p.entries = map[string]*poolEntry{}
	p.mu.Unlock()
	for _, e := range entries {
		e.cancel()
	}
	for _, e := range entries {
		<-e.done
	}
}

// Package netfault is a TCP proxy for tests that puts network faults between
// a client and a server on loopback: cut every connection, freeze traffic
// without closing sockets (a half-open link: no FIN, no RST), and count
// dials. It only ever listens on and dials loopback addresses.
package netfault

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections from its own loopback address to a target.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	frozen bool
	thaw   chan struct{} // closed when unfrozen
	// held: replies (server to client) are held, requests still flow.
	held     bool
	release  chan struct{} // closed when replies flow again
	upBytes  int64         // bytes forwarded client to server
	upChange chan struct{} // closed at the next upBytes change
	conns    map[*pair]struct{}
	dials    int
	closed   bool
	wg       sync.WaitGroup
}

type pair struct{ a, b net.Conn }

// New starts a proxy on 127.0.0.1 forwarding to target (host:port), which
// must be a loopback address.
func New(target string) (*Proxy, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("netfault: refusing non-loopback target %s", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*pair]struct{}{}, thaw: make(chan struct{}), release: make(chan struct{}), upChange: make(chan struct{})}
	close(p.thaw)
	close(p.release)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Dials counts accepted connections.
func (p *Proxy) Dials() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dials
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pr := &pair{a: c, b: up}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.dials++
		p.conns[pr] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(pr, c, up)
		go p.pipe(pr, up, c)
	}
}

// pipe copies src to dst in chunks, holding each chunk while frozen.
func (p *Proxy) pipe(pr *pair, dst, src net.Conn) {
	defer p.wg.Done()
	defer p.drop(pr)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			thaw, release := p.thaw, p.release
			p.mu.Unlock()
			<-thaw
			if src == pr.b {
				<-release
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if src == pr.a {
				p.mu.Lock()
				p.upBytes += int64(n)
				close(p.upChange)
				p.upChange = make(chan struct{})
				p.mu.Unlock()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			return
		}
	}
}

func (p *Proxy) drop(pr *pair) {
	pr.a.Close()
	pr.b.Close()
	p.mu.Lock()
	delete(p.conns, pr)
	p.mu.Unlock()
}

// Freeze stops forwarding in both directions; sockets stay open, so each
// side sees a silent, half-open link.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.frozen {
		p.frozen = true
		p.thaw = make(chan struct{})
	}
}

// Thaw resumes forwarding.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.frozen {
		p.frozen = false
		close(p.thaw)
	}
}

// HoldReplies stops forwarding from the server to the client while the
// client's requests still reach the server: the server acts on them and
// the client hears nothing (cut then, it is "written, link lost").
func (p *Proxy) HoldReplies() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.held {
		p.held = true
		p.release = make(chan struct{})
	}
}

// ReleaseReplies resumes forwarding replies.
func (p *Proxy) ReleaseReplies() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held {
		p.held = false
		close(p.release)
	}
}

// Forwarded returns how many bytes went from clients to the server, and
// a channel closed when that changes (for tests that wait on it).
func (p *Proxy) Forwarded() (int64, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.upBytes, p.upChange
}

// Cut closes every forwarded connection at once.
func (p *Proxy) Cut() {
	p.mu.Lock()
	prs := make([]*pair, 0, len(p.conns))
	for pr := range p.conns {
		prs = append(prs, pr)
	}
	p.mu.Unlock()
	for _, pr := range prs {
		pr.a.Close()
		pr.b.Close()
	}
}

// Close stops the proxy and every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.Thaw()
	p.ReleaseReplies()
	p.Cut()
	p.wg.Wait()
}

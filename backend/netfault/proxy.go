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
	conns  map[*pair]struct{}
	dials  int
	closed bool
	wg     sync.WaitGroup
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
	p := &Proxy{ln: ln, target: target, conns: map[*pair]struct{}{}, thaw: make(chan struct{})}
	close(p.thaw)
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
			thaw := p.thaw
			p.mu.Unlock()
			<-thaw
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
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
	p.Cut()
	p.wg.Wait()
}

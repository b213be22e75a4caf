package netfault

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echo serves a line-echo server on loopback.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c)
		}
	}()
	return ln.Addr().String()
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, msg string) (string, error) {
	t.Helper()
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func TestProxyForwardsFreezesAndCuts(t *testing.T) {
	t.Parallel()
	p, err := New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if got, err := roundTrip(t, c, r, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("forwarded %q, %v", got, err)
	}
	if p.Dials() != 1 {
		t.Fatalf("dials %d", p.Dials())
	}

	p.Freeze()
	c.Write([]byte("held\n"))
	// A frozen link delivers nothing: the read hits its deadline.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("data crossed a frozen link")
	}
	c.SetReadDeadline(time.Time{})
	p.Thaw()
	if got, err := r.ReadString('\n'); err != nil || got != "held\n" {
		t.Fatalf("after thaw got %q, %v; held data must be delivered", got, err)
	}

	p.Cut()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("connection still open after Cut")
	}
}

func TestProxyRefusesNonLoopbackTargets(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"10.0.0.1:80", "192.168.1.1:9119", "example.com:80"} {
		if p, err := New(target); err == nil {
			p.Close()
			t.Errorf("proxy accepted non-loopback target %s", target)
		}
	}
}

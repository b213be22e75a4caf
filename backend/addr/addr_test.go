package addr

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true}, {"LOCALHOST.", true}, {"gw.localhost", true}, {"a.b.localhost", true},
		{"127.0.0.1", true}, {"127.9.8.7", true}, {"::1", true}, {"[::1]", true}, {"::ffff:127.0.0.1", true},
		{"localhost.example.com", false}, {"notlocalhost", false}, {"vm", false}, {"10.0.0.1", false},
		{"0.0.0.0", false}, {"::", false}, {"192.168.1.2", false}, {"", false},
	} {
		if got := IsLoopback(tc.host); got != tc.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

func TestWithScheme(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"vm:18791":              "http://vm:18791",
		"127.0.0.1:8642":        "http://127.0.0.1:8642",
		"[::1]:9119":            "http://[::1]:9119",
		" localhost ":           "http://localhost",
		"https://gw":            "https://gw",
		"ws://127.0.0.1:9119/x": "ws://127.0.0.1:9119/x",
		"":                      "",
	} {
		if got := WithScheme(in); got != want {
			t.Errorf("WithScheme(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSecretInQuery: an address that carries a credential in its query
// is found (so it is refused before it is stored or shown), and errors
// quote the address without its query.
func TestSecretInQuery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, param, shown string }{
		{"ws://127.0.0.1:9119/api/ws?token=s3cret", "token", `"ws://127.0.0.1:9119/api/ws…"`},
		{"lab:9119/?Ticket=s3cret", "ticket", `"lab:9119/…"`},
		{"https://gw/v1?foo=1&api_key=s3cret", "api_key", `"https://gw/v1…"`},
		{"http://gw:8642/?key=s3cret#frag", "key", `"http://gw:8642/…"`},
		{"http://gw:9119/?password=s3cret", "password", `"http://gw:9119/…"`},
		{"http://gw:9119/?page=2", "", ""},
		{"http://gw:9119/#token=x", "", ""},
		{"vm:18791", "", ""},
		{"", "", ""},
	} {
		if got := SecretInQuery(tc.raw); got != tc.param {
			t.Errorf("SecretInQuery(%q) = %q, want %q", tc.raw, got, tc.param)
		}
		if tc.param == "" {
			continue
		}
		err := ErrSecretInQuery(tc.raw, tc.param).Error()
		if !strings.Contains(err, tc.shown) || strings.Contains(err, "s3cret") || strings.Contains(err, "\n") {
			t.Errorf("ErrSecretInQuery(%q) = %q, want it to quote %s and never the secret", tc.raw, err, tc.shown)
		}
	}
}

// TestProxyNeverForLoopback: a loopback target, by IP or by localhost name,
// never goes through a proxy, whatever HTTP_PROXY says.
func TestProxyNeverForLoopback(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://gw.localhost:9119/api/ws", "http://localhost:1", "http://127.0.0.1:9/", "http://[::1]:9/", "ws://x.localhost./"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if p, err := Proxy(req); p != nil || err != nil {
			t.Errorf("Proxy(%s) = %v, %v; want no proxy", u, p, err)
		}
	}
}

type recorder struct {
	mu     sync.Mutex
	dialed []string
}

func (r *recorder) dial(ctx context.Context, network, address string) (net.Conn, error) {
	r.mu.Lock()
	r.dialed = append(r.dialed, address)
	r.mu.Unlock()
	return (&net.Dialer{}).DialContext(ctx, network, address)
}

// TestDialKeepsLoopbackNamesOnLoopback: "gw.localhost" is connected to
// 127.0.0.1 itself, never resolved.
func TestDialKeepsLoopbackNamesOnLoopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, host := range []string{"gw.localhost", "localhost", "127.0.0.1"} {
		var r recorder
		c, err := Dial(r.dial)(context.Background(), "tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		c.Close()
		if len(r.dialed) != 1 || r.dialed[0] != ln.Addr().String() {
			t.Errorf("%s: dialled %v, want only %s", host, r.dialed, ln.Addr())
		}
	}
}

// fakeConn is a connection whose peer is elsewhere.
type fakeConn struct {
	net.Conn
	remote net.Addr
	closed bool
}

func (f *fakeConn) RemoteAddr() net.Addr { return f.remote }
func (f *fakeConn) Close() error         { f.closed = true; return nil }

// TestDialRefusesALoopbackTargetThatIsNot: when a "loopback" target's
// connection reaches another machine (a resolver, a hook or a tunnel sent
// it elsewhere), it is closed before anything is sent.
func TestDialRefusesALoopbackTargetThatIsNot(t *testing.T) {
	t.Parallel()
	far := &fakeConn{remote: &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 9119}}
	_, err := Dial(func(context.Context, string, string) (net.Conn, error) { return far, nil })(context.Background(), "tcp", "127.0.0.1:9119")
	if err == nil || !far.closed {
		t.Fatalf("err %v, closed %v: want a refusal and a closed connection", err, far.closed)
	}
	// A non-loopback target is dialled as given.
	var r recorder
	fail := errors.New("no network in tests")
	_, err = Dial(func(_ context.Context, _, a string) (net.Conn, error) {
		r.dialed = append(r.dialed, a)
		return nil, fail
	})(context.Background(), "tcp", "gw.example:9119")
	if !errors.Is(err, fail) || len(r.dialed) != 1 || r.dialed[0] != "gw.example:9119" {
		t.Fatalf("dialled %v, err %v", r.dialed, err)
	}
}

func TestDashboardBase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ws://127.0.0.1:9119/api/ws?token=x": "http://127.0.0.1:9119",
		"wss://h.example/hermes/api/ws":      "https://h.example/hermes",
		"http://h:1/":                        "http://h:1",
		"https://h":                          "https://h",
	} {
		u, err := DashboardBase(in)
		if err != nil || u.String() != want {
			t.Errorf("DashboardBase(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"", "h:1", "ftp://h/"} {
		if _, err := DashboardBase(bad); err == nil {
			t.Errorf("DashboardBase(%q) accepted", bad)
		}
	}
}

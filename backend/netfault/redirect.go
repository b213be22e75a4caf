package netfault

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Redirect is a server that answers every request with a redirect to plain
// http on a second listener (another loopback address where the system
// has one, else another port), and counts what reaches that second
// listener: a client that follows redirects would send it the request, its
// credentials included.
type Redirect struct {
	// URL is the redirecting server's base URL; Other the second
	// listener's.
	URL, Other string

	mu   sync.Mutex
	hits []*http.Request // requests that reached the second listener
	seen int             // requests the redirecting server answered
}

// NewRedirect starts both servers, closed at cleanup. The redirecting
// server answers status (a 3xx) with Location set to the same path on the
// second listener; with tls it serves https, as a dashboard behind TLS
// would (RootCAs of its Certificate).
func NewRedirect(t testing.TB, status int, tls bool) (*Redirect, *httptest.Server) {
	t.Helper()
	r := &Redirect{}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits = append(r.hits, req.Clone(req.Context()))
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		other.Listener.Close()
		other.Listener = ln
	}
	other.Start()
	t.Cleanup(other.Close)
	r.Other = other.URL
	first := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen++
		r.mu.Unlock()
		u := other.URL + req.URL.RequestURI()
		w.Header().Set("Location", u)
		w.WriteHeader(status)
	}))
	if tls {
		first.StartTLS()
	} else {
		first.Start()
	}
	t.Cleanup(first.Close)
	r.URL = first.URL
	return r, first
}

// Hits are the requests that reached the second listener.
func (r *Redirect) Hits() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.hits...)
}

// Seen counts the requests the redirecting server answered.
func (r *Redirect) Seen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

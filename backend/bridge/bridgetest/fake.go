// Package bridgetest is an in-process fake of the Hermes plugin herald's
// dashboard route (/api/plugins/herald/, see hermes-plugin/herald), for
// tests of Herald's bridge client. It models the route's rules: the
// dashboard token, the long-poll and its acknowledgement (a client that
// polls again with the new cursor has taken what it was given), answers
// bound to id and digest, first answer wins, late answers refused with why.
// The real plugin is tested against the same rules in hermes-plugin/tests
// and end to end in service's bridge tests.
package bridgetest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Origin mirrors the plugin's origin object.
type Origin struct {
	Surface    string `json:"surface,omitempty"`
	Platform   string `json:"platform,omitempty"`
	SessionKey string `json:"session_key,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Chat       string `json:"chat,omitempty"`
	Title      string `json:"title,omitempty"`
	Process    string `json:"process,omitempty"`
}

// Ask is an approval to put on the route.
type Ask struct {
	Command     string
	Description string
	Choices     []string // default once, session, always, deny
	Origin      Origin
	Timeout     time.Duration // default 300 s
}

type item struct {
	wire   map[string]any
	id     string
	digest string
	kind   string
	seq    int64
	seen   map[string]bool
	allow  []string
	answer chan string
}

// Fake is the route. Its zero value is not usable; call New.
type Fake struct {
	Token string

	mu       sync.Mutex
	instance string
	cursor   int64
	items    []*item
	recent   []map[string]any
	wake     chan struct{}
	polls    int
	answers  int
}

// New returns a fake route that accepts token.
func New(token string) *Fake {
	return &Fake{Token: token, instance: randHex(16), wake: make(chan struct{})}
}

// Serve runs the fake on a loopback httptest server, closed at cleanup.
func Serve(t testing.TB, token string) (*Fake, *httptest.Server) {
	f := New(token)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (f *Fake) changedLocked() {
	f.cursor++
	close(f.wake)
	f.wake = make(chan struct{})
}

// Ask puts an approval on the route; it returns its id and a channel that
// receives the winning answer.
func (f *Fake) Ask(a Ask) (string, <-chan string) {
	choices := a.Choices
	if choices == nil {
		choices = []string{"once", "session", "always", "deny"}
	}
	to := a.Timeout
	if to == 0 {
		to = 300 * time.Second
	}
	id, digest := randHex(16), randHex(32)
	it := &item{id: id, digest: digest, kind: "approval", seen: map[string]bool{}, allow: choices, answer: make(chan string, 1)}
	it.wire = map[string]any{"kind": "approval", "id": id, "request_id": id, "digest": digest, "command": a.Command,
		"description": a.Description, "pattern_key": "fake", "pattern_keys": []string{"fake"}, "surface": "cli",
		"allowed_choices": choices, "timeout_seconds": to.Seconds(), "origin": a.Origin}
	f.mu.Lock()
	f.changedLocked()
	it.seq = f.cursor
	f.items = append(f.items, it)
	f.mu.Unlock()
	return id, it.answer
}

// Notice puts a notice (answer where it was asked) on the route.
func (f *Fake) Notice(command string, o Origin) string {
	id := "notice-" + randHex(16)
	it := &item{id: id, kind: "notice", seen: map[string]bool{}}
	it.wire = map[string]any{"kind": "notice", "id": id, "command": command, "surface": "gateway",
		"allowed_choices": []string{}, "origin": o}
	f.mu.Lock()
	f.changedLocked()
	it.seq = f.cursor
	f.items = append(f.items, it)
	f.mu.Unlock()
	return id
}

// End takes a request or notice off the route with outcome (expired,
// transport_interrupted, a choice made elsewhere, ...).
func (f *Fake) End(id, outcome string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finishLocked(id, outcome, "", "")
}

func (f *Fake) finishLocked(id, outcome, choice, by string) *item {
	i := slices.IndexFunc(f.items, func(it *item) bool { return it.id == id })
	if i < 0 {
		return nil
	}
	it := f.items[i]
	f.items = slices.Delete(f.items, i, i+1)
	rec := map[string]any{"id": id, "kind": it.kind, "outcome": outcome}
	if choice != "" {
		rec["choice"], rec["by"] = choice, by
	}
	f.recent = append(f.recent, rec)
	if len(f.recent) > 256 {
		f.recent = f.recent[1:]
	}
	f.changedLocked()
	return it
}

// Restart is a dashboard restart: a new instance; every request is gone.
func (f *Fake) Restart() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.instance = randHex(16)
	f.items, f.recent = nil, nil
	f.changedLocked()
}

// Seen reports whether a client has taken (acknowledged) request id.
func (f *Fake) Seen(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.items {
		if it.id == id {
			return len(it.seen) > 0
		}
	}
	return false
}

// Answers counts answers the route accepted.
func (f *Fake) Answers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answers
}

// Polls counts polls.
func (f *Fake) Polls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls
}

func (f *Fake) stateLocked() map[string]any {
	items := make([]map[string]any, 0, len(f.items))
	for _, it := range f.items {
		items = append(items, it.wire)
	}
	recent := f.recent
	if len(recent) > 32 {
		recent = recent[len(recent)-32:]
	}
	return map[string]any{"protocol": 1, "instance": f.instance, "cursor": f.cursor, "items": items, "recent": recent, "watchers": 1}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP serves /api/plugins/herald/v1/{poll,answer,status}.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Hermes-Session-Token") != f.Token || f.Token == "" {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"detail": "Unauthorized"})
		return
	}
	switch strings.TrimPrefix(r.URL.Path, "/api/plugins/herald/") {
	case "v1/poll":
		f.poll(w, r)
	case "v1/answer":
		f.answer(w, r)
	case "v1/status":
		f.mu.Lock()
		st := map[string]any{"status": "on", "protocol": 1, "instance": f.instance, "pending": len(f.items)}
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, st)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	}
}

func (f *Fake) poll(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	inst, client := q.Get("instance"), q.Get("client")
	cursor, _ := strconv.ParseInt(q.Get("cursor"), 10, 64)
	wait, _ := strconv.ParseFloat(q.Get("wait"), 64)
	f.mu.Lock()
	f.polls++
	if inst == f.instance {
		for _, it := range f.items {
			if it.seq <= cursor {
				it.seen[client] = true
			}
		}
	}
	if wait > 0 && inst == f.instance && cursor == f.cursor {
		wake := f.wake
		f.mu.Unlock()
		t := time.NewTimer(time.Duration(min(wait, 8) * float64(time.Second)))
		select {
		case <-wake:
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
		f.mu.Lock()
	}
	st := f.stateLocked()
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, st)
}

func (f *Fake) answer(w http.ResponseWriter, r *http.Request) {
	var a struct{ ID, Digest, Choice, Client string }
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	if json.Unmarshal(body, &a) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"status": "invalid", "detail": "The answer is not a JSON object."})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.IndexFunc(f.items, func(it *item) bool { return it.id == a.ID })
	if i < 0 {
		for _, rec := range slices.Backward(f.recent) {
			if rec["id"] != a.ID {
				continue
			}
			if rec["outcome"] == "answered" {
				writeJSON(w, http.StatusConflict, map[string]any{"status": "already_answered", "choice": rec["choice"],
					"by_you": a.Client != "" && rec["by"] == a.Client, "detail": "This approval was already answered (" + rec["choice"].(string) + ")."})
				return
			}
			writeJSON(w, http.StatusGone, map[string]any{"status": "gone", "outcome": rec["outcome"],
				"detail": "Hermes is no longer waiting for this approval (" + rec["outcome"].(string) + ")."})
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"status": "unknown", "detail": "Hermes is not waiting for this approval (unknown request)."})
		return
	}
	it := f.items[i]
	switch {
	case it.kind == "notice":
		writeJSON(w, http.StatusConflict, map[string]string{"status": "notice", "detail": "Answer this approval where it was asked."})
	case a.Digest != it.digest:
		writeJSON(w, http.StatusConflict, map[string]string{"status": "mismatch", "detail": "Refused: this answer is for a different version of the request (id or digest do not match)."})
	case !slices.Contains(it.allow, a.Choice):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"status": "not_offered", "detail": "Refused: '" + a.Choice + "' was not offered for this request."})
	default:
		f.finishLocked(it.id, "answered", a.Choice, a.Client)
		f.answers++
		it.answer <- a.Choice
		writeJSON(w, http.StatusOK, map[string]string{"status": "answered", "choice": a.Choice})
	}
}

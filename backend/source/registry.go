package source

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// Driver is how Herald opens, checks and signs in to one transport. Each
// transport package registers one in its init function; the service opens
// sources through it, the window's gateway form and the command line's
// flags are built from its AuthModes, surfaces word and offer things by
// its Words and Offers, and no switch on the kind remains above backend/.
type Driver struct {
	// Kind is the transport's name in settings, flags and Status.Kind.
	Kind Kind
	// Aliases are other spellings ParseKind accepts ("websocket").
	Aliases []string
	// Title names the transport for people ("Dashboard gateway").
	Title string
	// Default: the transport of a source whose kind is not given.
	Default bool
	// Hint says, for people, what the transport speaks and where
	// ("WebSocket, port 9119"); the window's form shows it by the Title.
	Hint string
	// DefaultURL is where the server listens unless configured otherwise.
	DefaultURL string
	// Flag, when set, is the command line's flag that names servers of
	// this transport by URL ("gateway": --gateway URL); every transport
	// is also --source KIND:URL.
	Flag string
	// Beside, when set, is the kind of source this transport is followed
	// beside, on the same server with the same credentials (the Herald
	// bridge beside a dashboard gateway: `herald watch --bridge`).
	Beside Kind
	// BesideWords say, for people, what following this transport beside
	// a source brings and needs (the window's gateway form and row).
	BesideWords BesideWords
	// Auth lists the sign-in modes, the default first. The window's form
	// offers them; settings store the mode's Name.
	Auth []AuthMode
	// Words are what surfaces call its things (GenericWords fill those
	// it leaves empty); Offers what they may offer on its sources.
	Words  Words
	Offers Offers
	// Open builds a source (not yet running: the caller runs Run).
	Open func(Config, Hooks) (Source, error)
	// Check tries the server once, end to end, with cfg's credentials,
	// for the window's Test button.
	Check func(context.Context, Config) CheckResult
	// Detect, when set, asks the server which sign-in it wants, without
	// credentials (the window's "Detect sign-in").
	Detect func(context.Context, Config) (Detected, error)
}

// BesideWords are what surfaces say about a transport followed beside
// another source (Driver.Beside), for people; `backquoted` parts are what
// to type or copy.
type BesideWords struct {
	// Name is its short name on the gateway's row ("Herald bridge").
	Name string `json:"name"`
	// Offer labels the switch that turns it on, saying what it brings.
	Offer string `json:"offer"`
	// Hint says what it needs on the server and what happens without it.
	Hint string `json:"hint,omitempty"`
	// Missing is what the gateway's row says while the server does not
	// serve it (the source's StateConfigError).
	Missing string `json:"missing,omitempty"`
}

// Detected is what a server said about itself before signing in.
type Detected struct {
	Version      string
	AuthRequired bool
	// Auth is the AuthMode.Name to suggest.
	Auth string
}

// AuthMode is one way of signing in to a transport.
type AuthMode struct {
	// Name is the mode in settings and forms ("token", "password",
	// "key", "none"); it also names the keychain entry of its secret.
	Name string `json:"name"`
	// Label names the mode for people ("Session token").
	Label string `json:"label"`
	// Secret labels the secret's field ("" when the mode needs none).
	Secret string `json:"secret,omitempty"`
	// Username: the mode asks for a user name too.
	Username bool `json:"username,omitempty"`
	// Hint says, for people, where the secret comes from, as one or two
	// sentences; `backquoted` parts are what to type or copy. The
	// window's form shows it by the field, and the command line names it
	// when the server refused the secret.
	Hint string `json:"hint,omitempty"`
	// Flag and Env are the command line's flag and environment variable
	// for the secret ("token", "HERALD_TOKEN").
	Flag string `json:"-"`
	Env  string `json:"-"`
}

// NoAuth is the mode of a server that asks for no credentials.
var NoAuth = AuthMode{Name: "none", Label: "None"}

// HasSecret reports whether the mode needs a secret.
func (m AuthMode) HasSecret() bool { return m.Secret != "" }

// Config opens one source. Secrets are passed in, never stored here.
type Config struct {
	// Name identifies the source in events, status and settings
	// (default: its URL).
	Name string
	// URL is the server's address ("" is the driver's DefaultURL).
	URL string
	// Secrets holds the credentials by AuthMode.Name ("token": ...); the
	// transport uses those its modes need. Username goes with them.
	Secrets  map[string]string
	Username string
	// RootCAs, when set, replaces the system roots for TLS.
	RootCAs *x509.CertPool
	// Clock and Logger default as in Defaults.
	Clock  clock.Clock
	Logger *slog.Logger
	// DiscoveryInterval is how often live sessions are listed, where the
	// transport lists them (0: its default).
	DiscoveryInterval time.Duration
}

// Hooks are where a source delivers what it sees. Each must not block
// for long; OnEvent is called in order from one goroutine.
type Hooks struct {
	OnEvent  func(wire.Event)
	OnStatus func(Status)
	// OnDiscovery receives listings of live sessions, where the
	// transport lists them.
	OnDiscovery func(Discovery)
	// OnProblem hears of failures no call returns (following a session
	// once connected).
	OnProblem func(error)
}

// CheckResult is the outcome of Driver.Check.
type CheckResult struct {
	OK bool `json:"ok"`
	// Stage is the last step tried ("address", "http", "tls", "auth",
	// "handshake", ...).
	Stage string `json:"stage"`
	// Message says, for people, what happened and what to do.
	Message string `json:"message"`
}

// CheckFailed is the result of a Check that failed at stage with err
// (whose text is for people).
func CheckFailed(stage string, err error) CheckResult {
	return CheckResult{Stage: stage, Message: err.Error()}
}

var registry struct {
	mu      sync.RWMutex
	drivers []Driver
}

// Register adds a transport. It panics on a kind or alias already taken,
// as that is a programming error.
func Register(d Driver) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, o := range registry.drivers {
		for _, n := range d.names() {
			if slices.Contains(o.names(), n) {
				panic(fmt.Sprintf("source: transport %q registered twice", n))
			}
		}
	}
	d.Words = d.Words.orGeneric()
	registry.drivers = append(registry.drivers, d)
	// The default first, then in the order registered.
	slices.SortStableFunc(registry.drivers, func(a, b Driver) int {
		switch {
		case a.Default == b.Default:
			return 0
		case a.Default:
			return -1
		}
		return 1
	})
}

// Unregister removes a transport (tests that register a toy one).
func Unregister(k Kind) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.drivers = slices.DeleteFunc(registry.drivers, func(d Driver) bool { return d.Kind == k })
}

func (d Driver) names() []string {
	out := []string{strings.ToLower(string(d.Kind))}
	for _, a := range d.Aliases {
		out = append(out, strings.ToLower(a))
	}
	return out
}

// Drivers lists the registered transports, the default first.
func Drivers() []Driver {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return slices.Clone(registry.drivers)
}

// BesideOf is the transport followed beside a source of kind
// (Driver.Beside), if there is one.
func BesideOf(kind Kind) (Driver, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	for _, d := range registry.drivers {
		if d.Beside != "" && d.Beside == kind {
			return d, true
		}
	}
	return Driver{}, false
}

// Lookup finds a transport by kind or alias, ignoring case; "" is the
// default transport.
func Lookup(kind string) (Driver, error) {
	k := strings.ToLower(strings.TrimSpace(kind))
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	if len(registry.drivers) == 0 {
		return Driver{}, fmt.Errorf("Herald was built without transports")
	}
	if k == "" {
		return registry.drivers[0], nil
	}
	var names []string
	for _, d := range registry.drivers {
		if slices.Contains(d.names(), k) {
			return d, nil
		}
		names = append(names, fmt.Sprintf("%s (%s)", d.Kind, strings.ToLower(d.Title)))
	}
	return Driver{}, fmt.Errorf("%q is not a kind of gateway: use %s", kind, strings.Join(names, " or "))
}

// Mode returns the auth mode by name ("" is the default one). A mode the
// driver lacks is an error that lists the ones it has.
func (d Driver) Mode(name string) (AuthMode, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if len(d.Auth) == 0 {
		return NoAuth, nil
	}
	if name == "" {
		return d.Auth[0], nil
	}
	var names []string
	for _, m := range d.Auth {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return AuthMode{}, fmt.Errorf("sign-in %q is not one of %s", name, strings.Join(names, ", "))
}

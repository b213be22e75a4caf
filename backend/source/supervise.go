package source

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// The reconnect loop, once for every transport.
//
// A transport supplies one connect attempt (Supervisor.Connect: connect,
// say when the link is up, serve it until it fails) and says what an
// attempt's error means (Classify). The Supervisor does the rest, the
// same way for every transport: the state moves (connecting, syncing,
// connected, reconnecting, auth_failed, config_error, stopped), backoff,
// the user's "reconnect now", network changes, and what happens after a
// refusal.
//
// The policy:
//
//   - A network failure (FaultNetwork) is retried after Backoff's
//     OutageDelay: quickly while the outage is young, then slower, never
//     faster than the server's own Retry-After. A link that lasted
//     Backoff.Settled resets the attempt count.
//   - A link found stale after the machine slept (FaultWoke) is redialed
//     at once.
//   - A refusal (FaultCredentials: StateAuthFailed; FaultConfig:
//     StateConfigError) is not retried on a timer: retrying a refused
//     secret cannot succeed and may count against the account, and a
//     server that refuses the configuration refuses it again. The source
//     waits for the user: Kick (the window's Reconnect, new credentials,
//     or a sign that the server changed, such as the gateway a bridge
//     rides beside connecting again) retries at once. The status says
//     what to do, in the transport's words.
//   - Kick during a backoff wait retries at once; during a live link it
//     ends the link (its error says so) and redials at once.
//   - NetworkChanged during a backoff wait retries at once; during a live
//     link the attempt hears of it (Link.NetworkChanged) and checks its
//     link (or ends it with FaultWoke to redial). A refused source does
//     not retry on a network change.
type Supervisor struct {
	cfg  SupervisorConfig
	kick chan struct{}
	net  chan struct{}

	mu      sync.Mutex
	cancel  context.CancelCauseFunc // the running attempt's, nil between attempts
	running bool
}

// SupervisorConfig is what a transport gives its Supervisor.
type SupervisorConfig struct {
	// Connect is one connect attempt: it connects, calls Link.Up (or
	// Link.Syncing, then Link.Up) once the link is usable, serves it until
	// it fails or ctx ends, and returns why it ended. ctx also ends when
	// the user asks to reconnect (Kick) or Fail reports a failure found
	// elsewhere; its cause is then the attempt's error.
	Connect func(ctx context.Context, l *Link) error
	// Classify says what an attempt's error means, and the least wait the
	// server asked for (nil: DefaultClassify).
	Classify func(error) (Fault, time.Duration)
	// Update applies a change to the transport's status and publishes it
	// (the transport's setStatus).
	Update func(func(*Status))
	// Clock, Rand and Logger default as in Defaults; Backoff tunes the
	// delays.
	Clock   clock.Clock
	Rand    func() float64
	Logger  *slog.Logger
	Backoff Backoff
}

// Fault is what an ended attempt's error means to the loop.
type Fault int

// Faults.
const (
	// FaultNetwork: back off, then try again.
	FaultNetwork Fault = iota
	// FaultWoke: the link was fine before the machine slept (or the
	// network changed); redial at once.
	FaultWoke
	// FaultCredentials: the server refused the credentials
	// (StateAuthFailed); wait for the user.
	FaultCredentials
	// FaultConfig: the server refused for a reason retrying cannot fix
	// (StateConfigError); wait for the user.
	FaultConfig
)

// DefaultClassify reads the errors every transport shares: refused
// credentials (ErrUnauthorized) and a refused redirect (not the server
// the address should name) wait for the user; anything else is a
// network failure.
func DefaultClassify(err error) (Fault, time.Duration) {
	switch {
	case errors.Is(err, ErrUnauthorized):
		return FaultCredentials, 0
	case IsRedirect(err):
		return FaultConfig, 0
	}
	return FaultNetwork, 0
}

// ErrReconnectAsked ends a live link when the user asked to reconnect.
var ErrReconnectAsked = errors.New("reconnecting as asked")

// NewSupervisor returns a supervisor; Run runs its loop.
func NewSupervisor(cfg SupervisorConfig) *Supervisor {
	Defaults(&cfg.Clock, &cfg.Rand, &cfg.Logger)
	if cfg.Classify == nil {
		cfg.Classify = DefaultClassify
	}
	return &Supervisor{cfg: cfg, kick: make(chan struct{}, 1), net: make(chan struct{}, 1)}
}

// Kick retries at once: it ends a live link (ErrReconnectAsked), cuts a
// backoff wait short and ends the wait after a refusal.
func (s *Supervisor) Kick() { s.end(ErrReconnectAsked) }

// Fail ends the live link with err, a failure the transport found outside
// the attempt (a request refused the credentials): the loop then acts on
// err as on the attempt's own error. Between attempts it does nothing
// (the next attempt finds out for itself).
func (s *Supervisor) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(err)
	}
}

func (s *Supervisor) end(cause error) {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel(cause)
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// NetworkChanged says the network changed or the machine woke up: a
// backoff wait ends at once, and a live link is told (Link.NetworkChanged)
// so that it checks itself.
func (s *Supervisor) NetworkChanged() {
	select {
	case s.net <- struct{}{}:
	default:
	}
}

// Link is what an attempt reports through, and hears from.
type Link struct {
	s  *Supervisor
	mu sync.Mutex
	up time.Time
}

// Syncing reports a link that is connected and catching up (re-attaching
// sessions, replaying): StateSyncing. f, when set, updates more fields of
// the status in the same change.
func (l *Link) Syncing(f func(*Status)) { l.set(StateSyncing, f) }

// Up reports a live link: StateConnected. f as for Syncing.
func (l *Link) Up(f func(*Status)) { l.set(StateConnected, f) }

func (l *Link) set(st State, f func(*Status)) {
	now := l.s.cfg.Clock.Now()
	l.mu.Lock()
	first := l.up.IsZero()
	if first {
		l.up = now
	}
	l.mu.Unlock()
	l.s.cfg.Update(func(s *Status) {
		s.State, s.Err, s.NextRetry = st, "", time.Time{}
		if first {
			s.ConnectedAt = now
		}
		if st == StateConnected {
			s.Attempt = 0
		}
		if f != nil {
			f(s)
		}
	})
}

// NetworkChanged delivers a value when the network changed while the
// link is up.
func (l *Link) NetworkChanged() <-chan struct{} { return l.s.net }

func (l *Link) upAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

// Run runs the loop until ctx ends, and returns ctx's error. The status
// is StateStopped when it returns.
func (s *Supervisor) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errors.New("this source is already running")
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
		s.cfg.Update(func(st *Status) { st.State, st.NextRetry = StateStopped, time.Time{} })
	}()
	clk, bo := s.cfg.Clock, s.cfg.Backoff
	attempt := 0
	// outage is when the link last went down after a settled link:
	// retries are quick while it is young (a restart), slower after.
	var outage time.Time
	for ctx.Err() == nil {
		s.cfg.Update(func(st *Status) {
			st.State, st.Attempt, st.NextRetry = StateConnecting, attempt, time.Time{}
		})
		up, err := s.attempt(ctx)
		if ctx.Err() != nil {
			break
		}
		now := clk.Now()
		if !up.IsZero() && now.Sub(up) >= bo.WithDefaults().Settled {
			attempt, outage = 0, time.Time{}
		}
		if outage.IsZero() {
			outage = now
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		fault, after := s.cfg.Classify(err)
		if errors.Is(err, ErrReconnectAsked) {
			fault = FaultWoke // the user asked: no backoff
		}
		switch fault {
		case FaultWoke:
			s.cfg.Logger.Info("redialing at once", "err", msg)
			attempt, outage = 0, time.Time{}
			s.cfg.Update(func(st *Status) {
				st.State, st.Err, st.NextRetry, st.Attempt = StateReconnecting, msg, clk.Now(), 0
			})
			continue
		case FaultCredentials, FaultConfig:
			state := StateAuthFailed
			if fault == FaultConfig {
				state = StateConfigError
			}
			s.cfg.Logger.Warn("the server refused Herald; waiting for the user", "err", msg)
			s.cfg.Update(func(st *Status) { st.State, st.Err, st.NextRetry = state, msg, time.Time{} })
			select {
			case <-ctx.Done():
			case <-s.kick:
				attempt, outage = 0, time.Time{}
			}
			continue
		}
		d := max(bo.OutageDelay(attempt, now.Sub(outage), s.cfg.Rand()), after)
		attempt++
		next := clk.Now().Add(d)
		s.cfg.Logger.Info("connection down; retrying", "err", msg, "in", d)
		// Arm the timer before announcing the wait, so an observer that
		// reacts to the status (a test's fake clock) finds it armed.
		t := clk.NewTimer(d)
		s.cfg.Update(func(st *Status) {
			st.State, st.Err, st.NextRetry, st.Attempt = StateReconnecting, msg, next, attempt
		})
		select {
		case <-ctx.Done():
		case <-t.C():
		case <-s.kick:
		case <-s.net: // the network changed: the server may be back
		}
		t.Stop()
	}
	return ctx.Err()
}

// attempt runs one connect attempt; up is when its link came up (zero if
// it never did). A Kick or Fail during it is its error.
func (s *Supervisor) attempt(ctx context.Context) (up time.Time, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	// A kick before this attempt is answered by it.
	select {
	case <-s.kick:
	default:
	}
	l := &Link{s: s}
	err = s.cfg.Connect(actx, l)
	s.mu.Lock()
	s.cancel = nil
	s.mu.Unlock()
	if cause := context.Cause(actx); ctx.Err() == nil && actx.Err() != nil && cause != nil {
		err = cause // ended by Kick or Fail: that is why
	}
	cancel(nil)
	return l.upAt(), err
}

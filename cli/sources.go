package cli

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// statusPrinter prints a source's status only when it says something new:
// "connected" once (not on every event the source reports), a failure
// once with its countdown and then, while the same failure repeats, a
// "still retrying" line at most every stillRetrying, and a refusal that
// needs the user not at all (watch exits with it: see needsUser).
type statusPrinter struct {
	out *printer
	now func() time.Time

	mu    sync.Mutex
	last  map[string]statusKey
	since map[string]time.Time // when the failure now repeating was first shown
	told  map[string]time.Time // when a line about it was last printed
}

// stillRetrying is how often watch says a source is still being retried.
const stillRetrying = 30 * time.Second

type statusKey struct {
	state  source.State
	err    string
	missed bool
}

func newStatusPrinter(out *printer) *statusPrinter {
	return &statusPrinter{out: out, now: time.Now, last: map[string]statusKey{}, since: map[string]time.Time{}, told: map[string]time.Time{}}
}

// show prints s if it differs from what was last shown for its source.
func (p *statusPrinter) show(s source.Status) {
	k := statusKey{state: s.State, err: s.Err, missed: s.MayHaveMissedEvents}
	switch s.State {
	case source.StateConnecting, source.StateSyncing, source.StateIdle:
		return // passing states: nothing to say yet
	case source.StateConnected:
		k.err = ""
	}
	now := p.now()
	p.mu.Lock()
	old, seen := p.last[s.Gateway]
	p.last[s.Gateway] = k
	repeat := seen && old == k
	since, told := p.since[s.Gateway], p.told[s.Gateway]
	switch {
	case s.State != source.StateReconnecting:
		delete(p.since, s.Gateway)
		delete(p.told, s.Gateway)
	case !repeat:
		since = now
		p.since[s.Gateway], p.told[s.Gateway] = now, now
	case now.Sub(told) >= stillRetrying:
		p.told[s.Gateway] = now
	default:
		p.mu.Unlock()
		return // the same failure, said less than stillRetrying ago
	}
	p.mu.Unlock()
	if repeat && s.State != source.StateReconnecting {
		return
	}
	if p.out.json {
		p.out.record(jsonRecord{Type: "status", Status: &s})
		return
	}
	switch s.State {
	case source.StateConnected:
		if seen && old.state == source.StateConnected && !k.missed {
			return // the missed-events warning cleared: nothing to announce
		}
		warn := ""
		if s.MayHaveMissedEvents {
			warn = " (events may have been missed: " + service.MissedText(s.MissedReason) + ")"
		}
		how := ""
		if t := s.Features.DeliveryText; t != "" {
			how = " (" + t + ")"
		}
		p.out.line("● %s connected%s%s", s.Gateway, how, warn)
	case source.StateReconnecting:
		in := ""
		if !s.NextRetry.IsZero() {
			if d := s.NextRetry.Sub(p.now()).Round(time.Second); d > 0 {
				in = fmt.Sprintf("; retrying in %s", d)
			} else {
				in = "; retrying now"
			}
		}
		if repeat {
			p.out.line("○ %s: still retrying since %s (%s)%s", s.Gateway, since.Format("15:04:05"), approval.VisibleLine(s.Err), in)
			return
		}
		p.out.line("○ %s: %s%s", s.Gateway, approval.VisibleLine(s.Err), in)
	case source.StateStopped:
	}
}

// needsUser reports a refusal that retrying cannot fix: watch then exits.
func needsUser(s source.Status) bool {
	return s.State == source.StateAuthFailed || s.State == source.StateConfigError
}

// refusal is the one line watch exits with when a source refused it. A
// refused sign-in names the flags and variables of the transport's
// sign-ins, from its driver; a transport with one secret says which one
// was refused and where it comes from.
func refusal(s source.Status) error { return refusalGiven(s, true) }

// refusalGiven is refusal knowing whether any secret was given for the
// source: a transport with one secret refused without one says that it
// wants it, not that the one given was wrong.
func refusalGiven(s source.Status, given bool) error {
	why := approval.VisibleLine(strings.TrimSuffix(s.Err, "."))
	d, err := source.Lookup(s.Kind)
	if s.State != source.StateAuthFailed || err != nil {
		return fmt.Errorf("%s: %s", s.Gateway, why)
	}
	var modes []source.AuthMode
	var how []string
	for _, m := range d.Auth {
		switch {
		case !m.HasSecret() || m.Flag == "":
			continue
		case m.Username:
			how = append(how, fmt.Sprintf("--%s/--%s or %s/%s", userFlag, m.Flag, userEnv, m.Env))
		default:
			how = append(how, fmt.Sprintf("--%s or %s", m.Flag, m.Env))
		}
		modes = append(modes, m)
	}
	if len(modes) == 1 {
		m := modes[0]
		line := fmt.Sprintf("%s: the %s refused the %s: pass the right one with %s", s.Gateway, lowerFirst(d.Title), lowerFirst(m.Label), how[0])
		if !given {
			line = fmt.Sprintf("%s: the %s wants its %s and Herald has none: pass it with %s", s.Gateway, lowerFirst(d.Title), lowerFirst(m.Label), how[0])
		}
		if m.Hint != "" {
			line += " (" + strings.TrimSuffix(m.Hint, ".") + ")"
		}
		return errors.New(line)
	}
	return fmt.Errorf("%s: %s (sign in with %s)", s.Gateway, why, strings.Join(how, ", or "))
}

// startFailed is the one line watch exits with when --start failed on a
// source of the given kind.
func startFailed(name string, kind source.Kind, err error) error {
	if errors.Is(err, source.ErrUnauthorized) {
		return refusal(source.Status{Gateway: name, Kind: string(kind), State: source.StateAuthFailed, Err: err.Error()})
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "starting the run failed") {
		return fmt.Errorf("%s: starting the run failed: %w", name, surface.ShownError(err, approval.VisibleLine))
	}
	return fmt.Errorf("%s: %w", name, surface.ShownError(err, approval.VisibleLine))
}

// flagKind is the transport whose own flag (source.Driver.Flag) is name:
// --gateway's and --api's servers are of the kind their drivers say.
func flagKind(name string) source.Kind {
	for _, d := range source.Drivers() {
		if d.Flag == name {
			return d.Kind
		}
	}
	d, _ := source.Lookup("")
	return d.Kind
}

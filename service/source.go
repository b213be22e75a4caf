package service

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/herald-desktop/herald/backend/source"
)

// Kind is the transport of a Source (see backend/source).
type Kind = source.Kind

// ParseKind reads a kind as settings and flags spell it ("" is the
// default transport); it is the registered driver's kind.
func ParseKind(k string) (Kind, error) {
	d, err := source.Lookup(k)
	if err != nil {
		return "", err
	}
	return d.Kind, nil
}

// Source is one way Herald follows Hermes (the contract of
// backend/source). Every surface reaches every transport through it, via
// the Service.
type Source = source.Source

// RunStarter is a Source that can start runs (the API server).
type RunStarter = source.RunStarter

// SourceConfig describes a source to add: the transport's Config
// (secrets are passed in, never stored by the service; a zero Clock or
// Logger is the service's) and what the service does with it.
type SourceConfig struct {
	// Kind is the transport ("" is the default one).
	Kind Kind
	source.Config
	// OnStatus sees this source's status changes before the service does.
	// It must not block.
	OnStatus func(source.Status)
	// Bridge (dashboard gateways only) also follows the dashboard's Herald
	// bridge (the Hermes plugin herald) with the same URL and credentials,
	// as a source named BridgeName(Name): the approvals of every Hermes
	// process of the profile, not only the dashboard's sessions.
	Bridge bool
	// Resume are the sessions (stored or live ids) the user followed on
	// this source before Herald started: only those still live are
	// resumed (see resume.go).
	Resume []string
}

// AddSource opens a source through its transport's driver and starts
// following it. Names are unique across every kind.
func (s *Service) AddSource(cfg SourceConfig) (Source, error) {
	d, err := source.Lookup(string(cfg.Kind))
	if err != nil {
		return nil, err
	}
	if cfg.Name != "" {
		if err := s.taken(cfg.Name); err != nil {
			return nil, err
		}
	}
	sc := cfg.Config
	if sc.DiscoveryInterval == 0 {
		sc.DiscoveryInterval = s.cfg.DiscoveryInterval
	}
	if sc.Clock == nil {
		sc.Clock = s.clk
	}
	if sc.Logger == nil {
		sc.Logger = s.log
	}
	var name string // set once opened; problems come only while running
	src, err := d.Open(sc, source.Hooks{
		OnEvent:     s.onEvent,
		OnStatus:    s.statusHook(cfg.OnStatus),
		OnDiscovery: s.onDiscovery,
		OnProblem:   func(err error) { s.problem(name, err) },
	})
	if err != nil {
		return nil, err
	}
	name = src.Name()
	later := s.resumeWhenListed(src, cfg.Resume)
	if err := s.start(src); err != nil {
		return nil, err
	}
	s.followNow(src, later)
	s.rememberBase(name, cfg.URL)
	if cfg.Bridge {
		b, ok := source.BesideOf(d.Kind)
		if !ok {
			return src, fmt.Errorf("only a dashboard gateway has a Herald bridge, not %s", d.Title)
		}
		return src, s.addBridgeOf(name, b.Kind, cfg)
	}
	return src, nil
}

// statusHook feeds a source's status to user, then to the service.
func (s *Service) statusHook(user func(source.Status)) func(source.Status) {
	return func(st source.Status) {
		if user != nil {
			user(st)
		}
		s.onStatus(st)
	}
}

// start registers an opened source and runs it until it is removed or
// the service closes.
func (s *Service) start(src Source) error {
	s.bus.start()
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	if err := s.register(src, cancel, done); err != nil {
		cancel()
		return err
	}
	go func() {
		defer close(done)
		src.Run(ctx)
	}()
	// Approvals restored from the history (Herald restarted while they
	// waited) belong to runs nobody follows now: follow them, so their
	// end settles the approvals.
	if _, runs := src.(RunStarter); runs {
		for _, r := range s.inbox.Pending() {
			if r.Gateway == src.Name() && r.Uncertain && r.Session != "" {
				src.Follow(ctx, r.Session)
			}
		}
	}
	s.changed()
	return nil
}

// sources is the set of running sources, each in goroutines of its own.
type sources struct {
	mu     sync.Mutex
	byName map[string]*sourceEntry
	// base is each source's server as scheme://host[/path] (see
	// dashboardOf), to match a dashboard's bridge with its gateway.
	base map[string]string
}

type sourceEntry struct {
	src    Source
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *Service) register(src Source, cancel context.CancelFunc, done chan struct{}) error {
	s.src.mu.Lock()
	defer s.src.mu.Unlock()
	if s.src.byName == nil {
		s.src.byName = map[string]*sourceEntry{}
	}
	if _, dup := s.src.byName[src.Name()]; dup {
		return fmt.Errorf("a gateway named %q is already configured; pick another name", src.Name())
	}
	s.src.byName[src.Name()] = &sourceEntry{src: src, cancel: cancel, done: done}
	return nil
}

func (s *Service) taken(name string) error {
	if _, ok := s.Source(name); ok {
		return fmt.Errorf("a gateway named %q is already configured; pick another name", name)
	}
	return nil
}

// Source returns a source by name.
func (s *Service) Source(name string) (Source, bool) {
	s.src.mu.Lock()
	defer s.src.mu.Unlock()
	e, ok := s.src.byName[name]
	if !ok {
		return nil, false
	}
	return e.src, true
}

// Sources lists every source, sorted by name.
func (s *Service) Sources() []Source {
	s.src.mu.Lock()
	out := make([]Source, 0, len(s.src.byName))
	for _, e := range s.src.byName {
		out = append(out, e.src)
	}
	s.src.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// follower returns a source that follows live sessions by stored id
// (the dashboard gateway's), for the Sessions panel's calls.
func (s *Service) follower(name string) (source.SessionFollower, bool) {
	src, ok := s.Source(name)
	if !ok {
		return nil, false
	}
	f, ok := src.(source.SessionFollower)
	return f, ok
}

// CheckLinks asks every source that can to check its link now (after the
// machine woke up).
func (s *Service) CheckLinks() {
	for _, src := range s.Sources() {
		if lc, ok := src.(source.LinkChecker); ok {
			lc.CheckLink()
		}
	}
}

// kindOf is a source's kind as a string ("" when unknown).
func (s *Service) kindOf(name string) string {
	if src, ok := s.Source(name); ok {
		return string(src.Kind())
	}
	return ""
}

// Follow follows a session or run on a source.
func (s *Service) Follow(ctx context.Context, source, id string) error {
	src, ok := s.Source(source)
	if !ok {
		return fmt.Errorf("no gateway named %q is configured", source)
	}
	return src.Follow(ctx, id)
}

// StartRun starts a run on an API server and follows it.
func (s *Service) StartRun(ctx context.Context, source, input string) (string, error) {
	src, ok := s.Source(source)
	if !ok {
		return "", fmt.Errorf("no gateway named %q is configured", source)
	}
	st, ok := src.(RunStarter)
	if !ok {
		return "", fmt.Errorf("%s is a WebSocket gateway: runs are started on API servers (--api)", source)
	}
	id, err := st.StartRun(ctx, input)
	if err == nil {
		s.nameRun(source, id, input)
	}
	return id, err
}

// nameRun records the first prompt of a session or run Herald started
// (its input): its name until the gateway gives it a title.
func (s *Service) nameRun(source, id, input string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := source + "/" + id
	if v := s.sessions[k]; v != nil {
		if v.FirstPrompt == "" {
			v.FirstPrompt = runTitle(input)
		}
		return
	}
	if len(s.firstPrompts) < MaxSessionsPerGateway {
		s.firstPrompts[k] = runTitle(input)
	}
}

// Remove stops a source (either kind), waits for it and forgets its
// sessions.
func (s *Service) Remove(name string) {
	if b, ok := s.Source(BridgeName(name)); ok && rides(b) {
		defer s.Remove(BridgeName(name)) // a gateway's bridge goes with it
	}
	s.src.mu.Lock()
	e, ok := s.src.byName[name]
	delete(s.src.byName, name)
	delete(s.src.base, name)
	s.src.mu.Unlock()
	if ok {
		e.cancel()
		<-e.done
	}
	s.forgetLive(name)
	s.forgetStored(name)
	s.mu.Lock()
	delete(s.statuses, name)
	for k, v := range s.sessions {
		if v.Gateway == name {
			delete(s.sessions, k)
		}
	}
	delete(s.sessionCount, name)
	delete(s.sessionsDropped, name)
	s.mu.Unlock()
	s.changed()
}

// Reconnect asks a source to reconnect now.
func (s *Service) Reconnect(name string) error {
	src, ok := s.Source(name)
	if !ok {
		return fmt.Errorf("no gateway named %q is configured", name)
	}
	src.ReconnectNow()
	return nil
}

func (s *Service) closeSources() {
	s.src.mu.Lock()
	entries := s.src.byName
	s.src.byName = nil
	s.src.mu.Unlock()
	for _, e := range entries {
		e.cancel()
	}
	for _, e := range entries {
		<-e.done
	}
}

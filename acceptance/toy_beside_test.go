package acceptance_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
	"github.com/herald-desktop/herald/service"
)

// still is a toy source that only connects (or says what is wrong) and
// remembers how it was opened.
type still struct {
	kind      source.Kind
	name, url string
	secret    string
	h         source.Hooks
	mu        sync.Mutex
	status    source.Status
	stopped   chan struct{}
	state     source.State
}

func (s *still) Name() string      { return s.name }
func (s *still) Kind() source.Kind { return s.kind }
func (s *still) ReconnectNow()     {}
func (s *still) Status() source.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}
func (s *still) Follow(context.Context, string) error { return nil }
func (s *still) Unfollow(string)                      {}
func (s *still) RespondApproval(context.Context, string, string, string) (int, error) {
	return 0, nil
}
func (s *still) RespondServerRequest(context.Context, string, string) error { return nil }
func (s *still) set(st source.State, err string) {
	s.mu.Lock()
	s.status.State, s.status.Err = st, err
	cp := s.status
	s.mu.Unlock()
	s.h.OnStatus(cp)
}
func (s *still) Run(ctx context.Context) error {
	if s.state == source.StateConfigError {
		s.set(s.state, "the toy perch has no lamp")
	} else {
		s.set(source.StateConnected, "")
	}
	<-ctx.Done()
	s.set(source.StateStopped, "")
	close(s.stopped)
	return ctx.Err()
}

// TestToyBesideThroughTheWindow: a toy transport that rides beside another
// toy (source.Driver.Beside) becomes a switch on that kind's gateways in
// the window's form, worded as its driver words it, opened with the
// gateway's address and secret, and shown on the gateway's row, with no
// other file knowing either toy.
func TestToyBesideThroughTheWindow(t *testing.T) {
	const perch, lamp source.Kind = "toy-perch", "toy-lamp"
	spell := source.AuthMode{Name: "spell", Label: "Toy spell", Secret: "Spell", Hint: "`sesame`"}
	opened := make(chan *still, 4)
	lampState := source.StateConnected
	open := func(k source.Kind) func(source.Config, source.Hooks) (source.Source, error) {
		return func(cfg source.Config, h source.Hooks) (source.Source, error) {
			s := &still{kind: k, name: cfg.Name, url: cfg.URL, secret: cfg.Secrets["spell"], h: h, stopped: make(chan struct{})}
			if k == lamp {
				s.state = lampState
			}
			s.status = source.Status{Gateway: cfg.Name, Kind: string(k), State: source.StateIdle}
			opened <- s
			return s, nil
		}
	}
	check := func(context.Context, source.Config) source.CheckResult { return source.CheckResult{OK: true} }
	words := source.BesideWords{Name: "Toy lamp", Offer: "Also light the toy lamp on this perch", Hint: "Needs a lamp: `toy lamp install`.", Missing: "no lamp on this perch"}
	source.Register(source.Driver{Kind: perch, Title: "Toy perch", DefaultURL: "toy://perch", Auth: []source.AuthMode{spell, source.NoAuth}, Open: open(perch), Check: check})
	source.Register(source.Driver{Kind: lamp, Title: "Toy lamp", DefaultURL: "toy://perch", Beside: perch, BesideWords: words, Auth: []source.AuthMode{spell}, Open: open(lamp), Check: check})
	t.Cleanup(func() { source.Unregister(lamp); source.Unregister(perch) })

	keyring.MockInit()
	settings, err := app.NewSettingsStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(app.Deps{Settings: settings, Secrets: app.NewSecrets(app.OSKeyring{}), Store: approval.NewMemoryStore()})
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w := a.WindowAPI()

	for _, k := range w.GatewayKinds() {
		switch {
		case k.Kind == string(perch):
			if k.Bridge == nil || k.Bridge.BesideWords != words || strings.Join(k.Bridge.Auth, ",") != "spell" {
				t.Fatalf("the perch's form offers %+v", k.Bridge)
			}
		case k.Bridge != nil && k.Bridge.Name == words.Name:
			t.Fatalf("%s offers the toy lamp", k.Kind)
		}
	}
	if err := w.AddGateway(app.AddGatewayRequest{Name: "nest", Kind: string(perch), URL: "toy://perch/7", Auth: "none", Bridge: true}); err == nil || !strings.Contains(err.Error(), "toy spell") {
		t.Fatalf("the lamp with a sign-in it lacks: %v", err)
	}
	if err := w.AddGateway(app.AddGatewayRequest{Name: "nest", Kind: string(perch), URL: "toy://perch/7", Auth: "spell", Secret: "sesame", Bridge: true}); err != nil {
		t.Fatal(err)
	}
	gw, bl := <-opened, <-opened
	if gw.kind != perch || bl.kind != lamp || bl.url != "toy://perch/7" || bl.secret != "sesame" {
		t.Fatalf("opened %s %q and %s %q %q", gw.kind, gw.name, bl.kind, bl.url, bl.secret)
	}
	var mu sync.Mutex
	wake := make(chan struct{})
	changed := func() <-chan struct{} { mu.Lock(); defer mu.Unlock(); return wake }
	sub := a.Service().Subscribe(service.WatchChanges, 0)
	go func() {
		for {
			if _, err := sub.Next(context.Background()); err != nil {
				return
			}
			mu.Lock()
			close(wake)
			wake = make(chan struct{})
			mu.Unlock()
		}
	}()
	row := func() app.GatewayView {
		t.Helper()
		var s app.Snapshot
		testwait.Until(t, 10*time.Second, "the lamp on the perch's row", changed, func() bool {
			s = w.Snapshot()
			return len(s.Gateways) == 1 && s.Gateways[0].Bridge != nil && s.Gateways[0].Bridge.State != "connecting" && s.Gateways[0].Bridge.State != "idle"
		})
		return s.Gateways[0]
	}
	if r := row(); r.Name != "nest" || r.Bridge.Name != "Toy lamp" || r.Bridge.Text != "connected" {
		t.Fatalf("row %+v bridge %+v", r, r.Bridge)
	}

	// A perch without a lamp: the row says so in the lamp's words.
	lampState = source.StateConfigError
	if err := w.EditGateway("nest", app.AddGatewayRequest{Name: "nest", Kind: string(perch), URL: "toy://perch/7", Auth: "spell", Bridge: true}); err != nil {
		t.Fatal(err)
	}
	<-gw.stopped
	<-bl.stopped
	gw, bl = <-opened, <-opened
	if r := row(); r.Bridge.Text != "no lamp on this perch" || r.State != "connected" || r.Error != "" {
		t.Fatalf("row %+v bridge %+v", r, r.Bridge)
	}
	if err := w.RemoveGateway("nest"); err != nil {
		t.Fatal(err)
	}
	<-gw.stopped
	<-bl.stopped
}

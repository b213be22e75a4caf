package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/addr"

	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// Gateways, of every registered transport (source.Drivers), are added,
// edited and removed here. Settings keep only names, addresses and which
// secret to look up; tokens, passwords and API keys live in the keychain
// (Secrets), under the sign-in's name. Every gateway runs as a
// service.Source.

// kindOf is a stored kind as the window names it: settings written
// before there was a kind ("") are the default transport's.
func kindOf(stored string) string {
	if d, err := source.Lookup(stored); err == nil {
		return string(d.Kind)
	}
	return stored
}

// ofKind is v of the stored kind, named as the window names it, with its
// driver's words and offers (GenericWords and no offers for a kind this
// Herald does not know).
func (v GatewayView) ofKind(stored string) GatewayView {
	v.Kind, v.Transport = stored, Transport{Words: source.GenericWords}
	if d, err := source.Lookup(stored); err == nil {
		v.Kind, v.Transport = string(d.Kind), transportOf(d)
	}
	return v
}

// GatewayKinds lists the transports the Add/Edit form offers, the default
// first, as their drivers describe them.
func (a *App) GatewayKinds() []GatewayKind {
	var out []GatewayKind
	for _, d := range source.Drivers() {
		k := GatewayKind{Kind: string(d.Kind), Title: d.Title, Hint: d.Hint, DefaultURL: d.DefaultURL, Detect: d.Detect != nil, Transport: transportOf(d), Bridge: bridgeOffer(d), Beside: d.Beside != ""}
		for _, m := range d.Auth {
			k.Auth = append(k.Auth, SignIn{Name: m.Name, Label: m.Label, Secret: m.Secret, Username: m.Username, Hint: m.Hint})
		}
		if len(k.Auth) == 0 {
			k.Auth = []SignIn{{Name: "none", Label: "None"}}
		}
		out = append(out, k)
	}
	return out
}

// sourceConfig builds a source from settings and the keychain.
func (a *App) sourceConfig(g GatewaySettings) (service.SourceConfig, error) {
	d, err := source.Lookup(g.Kind)
	if err != nil {
		return service.SourceConfig{}, err
	}
	cfg := service.SourceConfig{Kind: d.Kind, Config: source.Config{Name: g.Name, URL: g.URL, Username: g.Username, Logger: a.log}}
	if m, err := d.Mode(g.Auth); err == nil && m.HasSecret() {
		v, err := a.d.Secrets.Get(g.Name, m.Name)
		if err != nil {
			return cfg, err
		}
		cfg.Secrets = map[string]string{m.Name: v}
	}
	if g.CAFile != "" {
		if cfg.RootCAs, err = service.ReadCA(g.CAFile); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// connect starts a gateway's source and follows the sessions the user
// chose (the service resumes them once the gateway is connected).
func (a *App) connect(g GatewaySettings) error {
	cfg, err := a.sourceConfig(g)
	if err != nil {
		return err
	}
	if msg := insecureWarning(g.Name, cfg); msg != "" {
		a.warn(msg)
	}
	// Only the saved sessions still live on the gateway are resumed: the
	// service drops the others (NoticeGone, see forgetGone).
	cfg.Resume = g.Sessions
	cfg.Bridge = g.Bridge // with the gateway's URL, secret and CA file
	a.clearBridgeProblem(g.Name)
	if src, err := a.svc.AddSource(cfg); err != nil {
		if src == nil {
			return err
		}
		// The gateway runs; only its bridge was not added: its row
		// says why.
		a.setBridgeProblem(g.Name, err)
		a.log.Warn(err.Error())
	}
	a.clearUnconnected(g.Name)
	a.applyFollowPolicy(g)
	return nil
}

// normalize checks a form and turns it into settings (no secret). The
// sign-ins come from the transport's driver.
func (a *App) normalize(req AddGatewayRequest) (GatewaySettings, source.Driver, error) {
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" {
		return GatewaySettings{}, source.Driver{}, errors.New("give the gateway a name")
	}
	d, err := source.Lookup(req.Kind)
	if err != nil {
		return GatewaySettings{}, d, err
	}
	m, err := d.Mode(req.Auth)
	if err != nil {
		return GatewaySettings{}, d, err
	}
	// Refused before anything is stored: settings.json holds no secrets.
	if p := addr.SecretInQuery(req.URL); p != "" {
		return GatewaySettings{}, d, addr.ErrSecretInQuery(req.URL, p)
	}
	g := GatewaySettings{Name: req.Name, URL: strings.TrimSpace(req.URL), Kind: string(d.Kind), Auth: m.Name, CAFile: strings.TrimSpace(req.CAFile)}
	if m.Username {
		g.Username = strings.TrimSpace(req.Username)
	}
	if req.Bridge {
		if err := checkBridge(d, m); err != nil {
			return GatewaySettings{}, d, err
		}
		g.Bridge = true
	}
	return g, d, nil
}

// secretOf is the form's secret for g's sign-in, and which keychain entry
// holds it ("" when the sign-in needs none).
func secretOf(g GatewaySettings, req AddGatewayRequest) (kind, value string) {
	d, err := source.Lookup(g.Kind)
	if err != nil {
		return "", ""
	}
	m, err := d.Mode(g.Auth)
	if err != nil || !m.HasSecret() {
		return "", ""
	}
	return m.Name, req.Secret
}

// secretKinds are the keychain entries a gateway may have: every
// sign-in's of every transport.
func secretKinds() []string {
	var out []string
	for _, d := range source.Drivers() {
		for _, m := range d.Auth {
			if m.HasSecret() && !slices.Contains(out, m.Name) {
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// TestGateway checks a gateway end to end with the credentials given
// (the transport's driver says how: for the WebSocket, HTTP, the upgrade
// and the handshake; for an API server, /health and the key).
func (a *App) TestGateway(req AddGatewayRequest) TestResult {
	d, err := source.Lookup(req.Kind)
	if err != nil {
		return TestResult{Stage: "config", Message: err.Error()}
	}
	cfg := source.Config{URL: req.URL, Username: req.Username}
	if strings.TrimSpace(req.CAFile) != "" {
		if cfg.RootCAs, err = service.ReadCA(strings.TrimSpace(req.CAFile)); err != nil {
			return TestResult{Stage: "tls", Message: err.Error()}
		}
	}
	if m, err := d.Mode(req.Auth); err == nil && m.HasSecret() {
		cfg.Secrets = map[string]string{m.Name: req.Secret}
	}
	ctx, cancel := context.WithTimeout(a.ctx, 15*time.Second)
	defer cancel()
	r := d.Check(ctx, cfg)
	return TestResult{OK: r.OK, Stage: r.Stage, Message: surface.Line(r.Message)}
}

// AddGateway saves a gateway or API server (its secret to the keychain)
// and connects.
func (a *App) AddGateway(req AddGatewayRequest) error {
	g, _, err := a.normalize(req)
	if err != nil {
		return err
	}
	if a.gatewayIndex(g.Name) >= 0 {
		return fmt.Errorf("a gateway named %q already exists; pick another name or remove it first", g.Name)
	}
	secretErr := a.storeSecret(g, req)
	if secretErr != nil && !errors.Is(secretErr, ErrNoKeychain) {
		return secretErr
	}
	if err := a.updateSettings(func(s *Settings) { s.Gateways = append(slices.Clone(s.Gateways), g) }); err != nil {
		return err
	}
	if err := a.connect(g); err != nil {
		return err
	}
	if secretErr != nil {
		// No keychain: the window's session-only banner says so and
		// what to do; the cause goes to the log.
		a.log.Warn(secretErr.Error())
	}
	return nil
}

// storeSecret puts the form's secret for g in the keychain (nothing when
// the form left it empty).
func (a *App) storeSecret(g GatewaySettings, req AddGatewayRequest) error {
	kind, value := secretOf(g, req)
	if kind == "" || value == "" {
		return nil
	}
	return a.d.Secrets.Set(g.Name, kind, value)
}

func (a *App) gatewayIndex(name string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.IndexFunc(a.settings.Gateways, func(g GatewaySettings) bool { return g.Name == name })
}

// gatewaySettings is the configured gateway named name.
func (a *App) gatewaySettings(name string) (GatewaySettings, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.settings.Gateways, func(g GatewaySettings) bool { return g.Name == name })
	if i < 0 {
		return GatewaySettings{}, false
	}
	return a.settings.Gateways[i], true
}

// GatewayForm returns a configured gateway as the Add/Edit form shows it,
// without its secret; HasSecret says whether the keychain holds one.
func (a *App) GatewayForm(name string) (GatewayFormView, error) {
	g, ok := a.gatewaySettings(name)
	if !ok {
		return GatewayFormView{}, fmt.Errorf("no gateway named %q is configured", name)
	}
	v := GatewayFormView{AddGatewayRequest: AddGatewayRequest{Name: g.Name, URL: g.URL, Kind: kindOf(g.Kind), Auth: g.Auth, Username: g.Username, CAFile: g.CAFile, Bridge: g.Bridge}}
	if kind, _ := secretOf(g, AddGatewayRequest{}); kind != "" {
		s, err := a.d.Secrets.Get(g.Name, kind)
		v.HasSecret = err == nil && s != ""
	}
	return v, nil
}

// EditGateway changes a configured gateway (name, address, kind,
// sign-in) and reconnects it. An empty secret field keeps the stored
// secret; the followed sessions are kept.
func (a *App) EditGateway(oldName string, req AddGatewayRequest) error {
	g, _, err := a.normalize(req)
	if err != nil {
		return err
	}
	i := a.gatewayIndex(oldName)
	if i < 0 {
		return fmt.Errorf("no gateway named %q is configured", oldName)
	}
	if g.Name != oldName && a.gatewayIndex(g.Name) >= 0 {
		return fmt.Errorf("a gateway named %q already exists; pick another name", g.Name)
	}
	a.mu.Lock()
	old := a.settings.Gateways[i]
	a.mu.Unlock()
	g.Sessions = slices.Clone(old.Sessions)
	g.Follow = old.Follow // set in the Sessions panel, not the form
	if old.Kind != g.Kind {
		g.Sessions = nil // session ids do not carry over between transports
	}

	// The secret: the form's, or the stored one carried over.
	kind, value := secretOf(g, req)
	if kind != "" && value == "" {
		if oldKind, _ := secretOf(old, AddGatewayRequest{}); oldKind == kind {
			if value, err = a.d.Secrets.Get(old.Name, kind); err != nil {
				return err
			}
		}
	}
	var secretErr error
	if kind != "" && value != "" {
		secretErr = a.d.Secrets.Set(g.Name, kind, value)
		if secretErr != nil && !errors.Is(secretErr, ErrNoKeychain) {
			return secretErr
		}
	}
	for _, k := range secretKinds() {
		if old.Name != g.Name || k != kind {
			a.d.Secrets.Delete(old.Name, k)
		}
	}
	a.svc.Remove(oldName) // and its bridge: connect adds it again if on
	a.clearUnconnected(oldName)
	a.clearBridgeProblem(oldName)
	err = a.updateSettings(func(s *Settings) {
		gws := slices.Clone(s.Gateways)
		if j := slices.IndexFunc(gws, func(x GatewaySettings) bool { return x.Name == oldName }); j >= 0 {
			gws[j] = g
		}
		s.Gateways = gws
	})
	if err != nil {
		return err
	}
	if err := a.connect(g); err != nil {
		return err
	}
	if secretErr != nil {
		// No keychain: the window's session-only banner says so and
		// what to do; the cause goes to the log.
		a.log.Warn(secretErr.Error())
	}
	a.batch.Poke()
	return nil
}

// RemoveGateway disconnects a gateway and forgets it and its secrets.
func (a *App) RemoveGateway(name string) error {
	if a.gatewayIndex(name) < 0 {
		return fmt.Errorf("no gateway named %q is configured", name)
	}
	a.svc.Remove(name) // and its bridge
	a.clearUnconnected(name)
	a.clearBridgeProblem(name)
	for _, k := range secretKinds() {
		a.d.Secrets.Delete(name, k)
	}
	err := a.updateSettings(func(s *Settings) {
		s.Gateways = slices.DeleteFunc(slices.Clone(s.Gateways), func(g GatewaySettings) bool { return g.Name == name })
	})
	a.batch.Poke()
	return err
}

// Reconnect reconnects one gateway now.
func (a *App) Reconnect(name string) error {
	if a.isUnconnected(name) {
		return a.retryUnconnected(name) // e.g. the keychain is unlocked now
	}
	if g, ok := a.gatewaySettings(name); ok && g.Bridge {
		if _, ok := a.svc.Source(service.BridgeName(name)); ok {
			_ = a.svc.Reconnect(service.BridgeName(name)) // its bridge too
		}
	}
	return a.svc.Reconnect(name)
}

// ProbeGateway asks a server of the given kind which sign-in it wants, as
// its driver detects it.
func (a *App) ProbeGateway(kind, url string) ProbeResult {
	d, err := source.Lookup(kind)
	if err == nil && d.Detect == nil {
		err = fmt.Errorf("a %s cannot say which sign-in it wants: pick one", strings.ToLower(d.Title))
	}
	if err != nil {
		return ProbeResult{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	info, err := d.Detect(ctx, source.Config{URL: url})
	if err != nil {
		return ProbeResult{Error: err.Error()}
	}
	return ProbeResult{Reachable: true, AuthRequired: info.AuthRequired, Version: info.Version, SuggestedAuth: info.Auth}
}

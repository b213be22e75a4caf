package app

import (
	"errors"
	"fmt"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
)

// A configured gateway Herald could not start (its secret unreadable
// without a keychain after a restart, a CA file gone) is still listed in
// the window, with what went wrong and its Edit and Remove buttons:
// otherwise it would be invisible, its name taken, and nothing could fix it.

// setUnconnected records why gateway name could not start.
func (a *App) setUnconnected(g GatewaySettings, err error) {
	msg := err.Error()
	if errors.Is(err, ErrNoKeychain) {
		secret := secretWord(g)
		msg = fmt.Sprintf("its %s could not be read from the system keychain (locked, or none is running): unlock it and press Reconnect, or click Edit and enter the %s again", secret, secret)
	}
	a.mu.Lock()
	if a.unconnected == nil {
		a.unconnected = map[string]string{}
	}
	a.unconnected[g.Name] = msg
	a.mu.Unlock()
}

// clearUnconnected forgets name's start failure (it started, or is gone).
func (a *App) clearUnconnected(name string) {
	a.mu.Lock()
	delete(a.unconnected, name)
	a.mu.Unlock()
}

// withUnconnected adds the configured gateways that could not start to
// the window's list. The caller holds no lock.
func (a *App) withUnconnected(views []GatewayView, configured []GatewaySettings) []GatewayView {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, g := range configured {
		msg, ok := a.unconnected[g.Name]
		if !ok {
			continue
		}
		listed := false
		for _, v := range views {
			listed = listed || v.Name == g.Name
		}
		if !listed {
			views = append(views, GatewayView{Name: g.Name, URL: g.URL, State: "config_error", Error: approval.VisibleLine(msg)}.ofKind(g.Kind))
		}
	}
	return views
}

// secretWord names g's secret as its sign-in's field does ("token", "API
// key").
func secretWord(g GatewaySettings) string {
	if d, err := source.Lookup(g.Kind); err == nil {
		if m, err := d.Mode(g.Auth); err == nil && m.HasSecret() {
			return m.SecretWord()
		}
	}
	return "secret"
}

func (a *App) isUnconnected(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.unconnected[name]
	return ok
}

// retryUnconnected tries again to start a configured gateway that could
// not start (Reconnect on its row): the keychain may be unlocked now, or
// the CA file back. A failure says again what to do.
func (a *App) retryUnconnected(name string) error {
	g, ok := a.gatewaySettings(name)
	if !ok {
		a.clearUnconnected(name)
		return fmt.Errorf("no gateway named %q is configured", name)
	}
	err := a.connect(g)
	if err != nil {
		a.setUnconnected(g, err)
		a.mu.Lock()
		msg := a.unconnected[name]
		a.mu.Unlock()
		err = fmt.Errorf("%s: %s", name, msg)
	}
	a.batch.Poke()
	return err
}

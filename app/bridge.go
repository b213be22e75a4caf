package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// A gateway's bridge: a transport that rides beside a gateway's kind
// (source.Driver.Beside, the Herald plugin's route beside a dashboard
// gateway) is turned on per gateway (GatewaySettings.Bridge) and followed
// with the gateway's own address, secret and CA file
// (service.SourceConfig.Bridge). Its state is shown on the gateway's row,
// not as a gateway of its own. Which kinds have one, and what it is called,
// comes from the drivers: no kind is named here.

// bridgeOffer is what the form offers beside a gateway of driver d's kind,
// or nil when no transport rides beside it.
func bridgeOffer(d source.Driver) *BridgeOffer {
	b, ok := source.BesideOf(d.Kind)
	if !ok {
		return nil
	}
	o := &BridgeOffer{BesideWords: b.BesideWords, Auth: []string{}}
	if o.Name == "" {
		o.Name = b.Title
	}
	if o.Offer == "" {
		o.Offer = "Also follow the " + source.MidSentence(b.Title)
	}
	for _, m := range d.Auth {
		if bridgeSignsInWith(b, m.Name) {
			o.Auth = append(o.Auth, m.Name)
		}
	}
	return o
}

// bridgeSignsInWith reports whether the bridge b can sign in with a
// gateway's sign-in of that name (it is given the gateway's secret).
func bridgeSignsInWith(b source.Driver, auth string) bool {
	if len(b.Auth) == 0 {
		return true
	}
	return slices.ContainsFunc(b.Auth, func(m source.AuthMode) bool { return m.Name == auth })
}

// checkBridge refuses a bridge the gateway's kind or sign-in cannot have.
func checkBridge(d source.Driver, m source.AuthMode) error {
	b, ok := source.BesideOf(d.Kind)
	if !ok {
		return fmt.Errorf("a %s has no bridge beside it: turn the bridge off", source.MidSentence(d.Title))
	}
	if !bridgeSignsInWith(b, m.Name) {
		o := bridgeOffer(d)
		var labels []string
		for _, n := range o.Auth {
			if mm, err := d.Mode(n); err == nil {
				labels = append(labels, source.MidSentence(mm.Label))
			}
		}
		return fmt.Errorf("the %s signs in with the gateway's %s only: choose that sign-in, or turn the %s off",
			o.Name, strings.Join(labels, " or "), o.Name)
	}
	return nil
}

// setBridgeProblem records why a gateway's bridge could not be added (the
// gateway itself runs).
func (a *App) setBridgeProblem(name string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bridgeProblem == nil {
		a.bridgeProblem = map[string]string{}
	}
	a.bridgeProblem[name] = err.Error()
}

// clearBridgeProblem forgets it (connected again, edited or removed).
func (a *App) clearBridgeProblem(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.bridgeProblem, name)
}

// bridgeView says a bridge's state in plain words.
func bridgeView(o *BridgeOffer, st source.Status) *BridgeView {
	v := &BridgeView{Name: o.Name, State: string(st.State)}
	errText := approval.VisibleLine(st.Err)
	switch st.State {
	case source.StateConnected:
		v.Text = "connected"
	case source.StateConfigError:
		v.Text = "not on this server"
		if o.Missing != "" {
			v.Text = o.Missing
		} else {
			v.Error = errText
		}
	case source.StateAuthFailed:
		v.Text, v.Error = "refused", errText
	case source.StateReconnecting:
		v.Text, v.Error = "not reachable, retrying", errText
	case source.StateStopped:
		v.Text = "stopped"
	default:
		v.Text = "connecting…"
	}
	return v
}

// withBridges moves each gateway's bridge from the list of gateways onto
// its gateway's row. A configured gateway whose own name is a bridge's
// stays a gateway. The caller holds no lock.
func (a *App) withBridges(views []GatewayView, statuses map[string]source.Status, configured []GatewaySettings) []GatewayView {
	a.mu.Lock()
	problems := maps.Clone(a.bridgeProblem)
	a.mu.Unlock()
	own := map[string]bool{}
	for _, g := range configured {
		own[g.Name] = true
	}
	riders := map[string]bool{}
	for _, g := range configured {
		if !g.Bridge {
			continue
		}
		d, err := source.Lookup(g.Kind)
		if err != nil {
			continue
		}
		o := bridgeOffer(d)
		if o == nil {
			continue
		}
		i := slices.IndexFunc(views, func(v GatewayView) bool { return v.Name == g.Name })
		if i < 0 {
			continue // not running: its row says why
		}
		bn := service.BridgeName(g.Name)
		switch st, ok := statuses[bn]; {
		case problems[g.Name] != "":
			views[i].Bridge = &BridgeView{Name: o.Name, State: string(source.StateConfigError), Text: "not started", Error: approval.VisibleLine(problems[g.Name])}
		case ok && !own[bn]:
			views[i].Bridge = bridgeView(o, st)
			riders[bn] = true
		default:
			views[i].Bridge = &BridgeView{Name: o.Name, State: string(source.StateConnecting), Text: "connecting…"}
		}
	}
	return slices.DeleteFunc(views, func(v GatewayView) bool { return riders[v.Name] })
}

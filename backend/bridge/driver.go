package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/herald-desktop/herald/backend/source"
)

// DefaultURL is the Hermes dashboard's default address.
const DefaultURL = "http://127.0.0.1:9119"

func init() {
	source.Register(source.Driver{
		Kind:       Kind,
		Aliases:    []string{"herald-bridge", "plugin"},
		Title:      "Herald bridge (Hermes plugin on a dashboard)",
		Hint:       "HTTP long-poll, port 9119",
		DefaultURL: DefaultURL,
		// It is a plugin's route on a dashboard, whose gateway speaks
		// "ws": it is followed beside that gateway.
		Beside: "ws",
		BesideWords: source.BesideWords{
			Name:  "Herald bridge",
			Offer: "Also bring approvals from the Hermes CLI, TUI, cron and messaging (Telegram, Discord, Slack…) on this host",
			Hint: "Uses this gateway's address and token. Needs the Herald plugin on the Hermes host: run `herald bridge install` there, then restart Hermes. " +
				"Without the plugin the gateway works as before and its row says the plugin is not installed.",
			Missing: "plugin not installed on the Hermes host: run `herald bridge install` there, then restart the dashboard (the gateway works without it)",
		},
		Auth: []source.AuthMode{
			{Name: "token", Label: "Dashboard session token", Secret: "Token", Flag: "token", Env: "HERALD_TOKEN",
				Hint: "The dashboard's session token: start Hermes as `HERMES_DASHBOARD_SESSION_TOKEN=your-token hermes dashboard` and give Herald the same value."},
		},
		// It relays the approvals of Hermes' sessions: it lists none and
		// takes no prompts.
		Words: source.Words{Conversation: "session", Interrupted: "Turn interrupted"},
		Open: func(cfg source.Config, h source.Hooks) (source.Source, error) {
			return New(configOf(cfg, h))
		},
		Check: check,
	})
}

func configOf(cfg source.Config, h source.Hooks) Config {
	name := cfg.Name
	if name == "" {
		name = cfg.URL
	}
	return Config{Name: name, URL: cfg.URL, Token: cfg.Secrets["token"], RootCAs: cfg.RootCAs,
		Clock: cfg.Clock, Logger: cfg.Logger, OnEvent: h.OnEvent, OnStatus: h.OnStatus}
}

// check is the driver's Check: one poll of the route, with the token.
func check(ctx context.Context, cfg source.Config) source.CheckResult {
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	c, err := New(configOf(source.Config{Name: "test", URL: cfg.URL, Secrets: cfg.Secrets, RootCAs: cfg.RootCAs}, source.Hooks{}))
	if err != nil {
		return source.CheckFailed("address", err)
	}
	st, err := c.poll(ctx)
	var he *httpError
	switch {
	case errors.As(err, &he) && he.code == 401:
		return source.CheckFailed("auth", err)
	case errors.As(err, &he):
		return source.CheckFailed("plugin", err)
	case err != nil:
		return source.CheckFailed("http", err)
	}
	return source.CheckResult{OK: true, Stage: "plugin", Message: fmt.Sprintf("Connected: the Herald bridge answered (%d waiting)", len(st.Items))}
}

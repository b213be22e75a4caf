package apiserver

import (
	"context"
	"errors"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
)

func init() {
	source.Register(source.Driver{
		Kind:       Kind,
		Aliases:    []string{"apiserver", "api-server"},
		Title:      "API server",
		Hint:       "HTTP, port 8642",
		DefaultURL: DefaultURL,
		Auth: []source.AuthMode{
			{Name: "key", Label: "API key", Secret: "API key", Flag: "api-key", Env: "HERALD_API_KEY",
				Hint: "`API_SERVER_KEY` from Hermes' `~/.hermes/.env`."},
			{Name: "none", Label: "None"},
		},
		Open: func(cfg source.Config, h source.Hooks) (source.Source, error) {
			c, err := New(Config{
				Name: cfg.Name, URL: cfg.URL, Key: cfg.Secrets["key"], RootCAs: cfg.RootCAs,
				Clock: cfg.Clock, Logger: cfg.Logger, OnEvent: h.OnEvent,
				OnStatus: func(st Status) {
					if h.OnStatus != nil {
						h.OnStatus(st.Source())
					}
				},
			})
			if err != nil {
				return nil, err
			}
			return &Source{c: c}, nil
		},
		Check: check,
	})
}

// check is the driver's Check: /health, then the key on
// /v1/capabilities.
func check(ctx context.Context, cfg source.Config) source.CheckResult {
	c, err := New(Config{Name: "test", URL: cfg.URL, Key: cfg.Secrets["key"], RootCAs: cfg.RootCAs, MaxRetries: 1})
	if err != nil {
		return source.CheckResult{Stage: "address", Message: err.Error()}
	}
	info, err := c.Probe(ctx)
	switch {
	case errors.Is(err, ErrUnauthorized):
		return source.CheckResult{Stage: "key", Message: "the API server refused the key: copy API_SERVER_KEY from Hermes' ~/.hermes/.env into the key field"}
	case err != nil:
		return source.CheckResult{Stage: "http", Message: err.Error()}
	}
	msg := "Connected: the API server answered"
	if info.Version != "" {
		msg += " (Hermes " + info.Version + ")"
	}
	return source.CheckResult{OK: true, Stage: "key", Message: msg}
}

// Source is a Client as a source.Source: runs are its sessions, and
// "nothing pending" (409) is a resolved count of 0.
type Source struct{ c *Client }

var (
	_ source.Source     = (*Source)(nil)
	_ source.RunStarter = (*Source)(nil)
)

// Client is the API-server client, for the API-only calls (stopping
// runs, starting them with options).
func (a *Source) Client() *Client { return a.c }

func (a *Source) Name() string                  { return a.c.Name() }
func (a *Source) Kind() source.Kind             { return Kind }
func (a *Source) Status() source.Status         { return a.c.Status().Source() }
func (a *Source) ReconnectNow()                 { a.c.ReconnectNow() }
func (a *Source) Unfollow(id string)            { a.c.Forget(id) }
func (a *Source) Run(ctx context.Context) error { return a.c.Run(ctx) }

// Follow follows a run by id.
func (a *Source) Follow(_ context.Context, id string) error {
	id = strings.TrimSpace(id)
	if id == "" {
		return errors.New("no run id given")
	}
	a.c.Follow(id)
	return nil
}

// StartRun starts a run with input and follows it.
func (a *Source) StartRun(ctx context.Context, input string) (string, error) {
	r, err := a.c.StartRun(ctx, RunRequest{Input: input})
	if err != nil {
		return "", err
	}
	return r.ID, nil
}

// RespondApproval answers a run's approval; a run with nothing pending
// resolved 0.
func (a *Source) RespondApproval(ctx context.Context, runID, choice, requestID string) (int, error) {
	err := a.c.RespondApproval(ctx, runID, choice, requestID)
	if errors.Is(err, ErrApprovalNotPending) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return 1, nil
}

// RespondServerRequest fails: the API server sends no server requests.
func (a *Source) RespondServerRequest(context.Context, string, string) error {
	return errors.New("the API server has no server requests")
}

package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// directFlags are the flags with which `herald stop` and `herald ask`
// reach a gateway themselves instead of through the running Herald.
type directFlags struct {
	gateway, api   *string
	creds          *credFlags
	connectTimeout *time.Duration
}

func addDirectFlags(fs *flag.FlagSet, gwHelp string) *directFlags {
	return &directFlags{
		gateway:        fs.String("gateway", "", gwHelp),
		api:            fs.String("api", "", "talk to this Hermes API server directly (URL or NAME=URL)"),
		creds:          addCredFlags(fs),
		connectTimeout: fs.Duration("connect-timeout", 15*time.Second, "how long to wait for a direct connection"),
	}
}

// direct reports whether the flags name a gateway to dial (a URL) rather
// than one of the running Herald's gateways (a name).
func (d *directFlags) direct() bool {
	return strings.Contains(*d.gateway, "://") || *d.api != ""
}

// name is the gateway name the running Herald knows (control-socket mode).
func (d *directFlags) name() string {
	if d.direct() {
		return ""
	}
	return *d.gateway
}

// connect starts a private service with the one gateway or API server the
// flags name and waits until it is connected. It returns the service and
// the gateway's name; close it when done.
func (d *directFlags) connect(ctx context.Context, e *env, out *printer, onEvent func(wire.Event)) (svc *service.Service, name string, stop func(), err error) {
	if *d.gateway != "" && *d.api != "" {
		return nil, "", nil, usageError{"give --gateway or --api, not both"}
	}
	cr, stdin, err := d.creds.resolve(e)
	if err != nil {
		return nil, "", nil, err
	}
	e.stdin = stdin
	which, v := "gateway", *d.gateway
	if *d.api != "" {
		which, v = "api", *d.api
	}
	kind := flagKind(which)
	_, u := splitGateway(v)
	if err := d.creds.checkURL(e, "--"+which, u, cr.secret(kind)); err != nil {
		return nil, "", nil, err
	}
	svc = service.New(service.Config{})
	events := svc.Subscribe(service.WatchEvents, 0)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for {
			n, err := events.Next(context.Background())
			if err != nil {
				return
			}
			printNotice(out, *n.Event, svc.SessionName(n.Event.Gateway, n.Event.Session, n.Event.StoredSession))
			if onEvent != nil {
				onEvent(*n.Event)
			}
		}
	}()
	// stop closes the service once what it delivered was printed.
	stop = func() {
		svc.Close()
		<-printed
	}
	connected := make(chan string, 8)
	cfg := service.SourceConfig{
		Config: source.Config{Username: cr.user, RootCAs: cr.roots},
		OnStatus: func(s source.Status) {
			select {
			case connected <- string(s.State) + "\x00" + s.Err:
			default:
			}
		},
	}
	cfg.Kind = kind
	cfg.Name, cfg.URL = splitGateway(v)
	cfg.Secrets = cr.secrets(cfg.Kind)
	src, err := svc.AddSource(cfg)
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	name = src.Name()
	t := time.NewTimer(*d.connectTimeout)
	defer t.Stop()
	last := ""
	for {
		select {
		case st := <-connected:
			state, msg, _ := strings.Cut(st, "\x00")
			switch source.State(state) {
			case source.StateConnected:
				return svc, name, stop, nil
			case source.StateAuthFailed, source.StateConfigError:
				stop()
				return nil, "", nil, fmt.Errorf("%s refused Herald: %s", name, msg)
			}
			if msg != "" {
				if last == "" {
					// Say so at once rather than after a silent wait.
					fmt.Fprintf(e.stderr, "%s: %s; retrying for up to %s (--connect-timeout)\n", name, approval.VisibleLine(msg), *d.connectTimeout)
				}
				last = msg
			}
		case <-t.C:
			stop()
			if last == "" {
				return nil, "", nil, fmt.Errorf("could not connect to %s within %s: no answer; check the URL and that Hermes runs", name, *d.connectTimeout)
			}
			return nil, "", nil, fmt.Errorf("could not connect to %s within %s: %s", name, *d.connectTimeout, approval.VisibleLine(last))
		case <-ctx.Done():
			stop()
			return nil, "", nil, ctx.Err()
		}
	}
}

func cmdStop(e *env, args []string) error {
	fs := newFlags("stop", e)
	ctl := controlFlag(fs)
	d := addDirectFlags(fs, "the gateway: a name the running Herald knows, or a URL to talk to directly")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageError{"usage: herald stop [flags] [ID]"}
	}
	id := fs.Arg(0)
	ctx, cancel := context.WithTimeout(e.ctx, service.ConfirmWait+45*time.Second)
	defer cancel()
	out := &printer{w: e.stdout, json: *asJSON}
	var res service.StopResult
	switch {
	case d.direct():
		if id == "" {
			return usageError{"with --gateway URL or --api, give the session or run id to stop"}
		}
		svc, name, stop, err := d.connect(ctx, e, out, nil)
		if err != nil {
			return err
		}
		defer stop()
		if res, err = svc.StopRun(ctx, name, id); err != nil {
			return err
		}
	case id == "":
		resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "runs"})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, resp.Runs)
		}
		if len(resp.Runs) == 0 {
			fmt.Fprintln(e.stdout, "No runs are active.")
			return nil
		}
		for _, r := range resp.Runs {
			fmt.Fprintln(e.stdout, runLine(r))
		}
		return nil
	default:
		resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "stop", Key: id, Gateway: d.name(), Surface: "cli"})
		if err != nil {
			if errors.Is(err, service.ErrNoDaemon) {
				return fmt.Errorf("%v, or give --gateway URL / --api URL to stop it directly", err)
			}
			return err
		}
		res = *resp.Stop
	}
	if *asJSON {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintln(e.stdout, approval.VisibleLine(res.Message))
	return nil
}

// runLine is one active run in `herald stop`'s list: the id to give
// `herald stop` (in the one form surfaces show ids: a session's stored id,
// which Hermes lists too, else the run's id), what it is in its
// transport's words (session, run), its one name and what it does. The
// ids are the gateway's text too.
func runLine(r service.RunRef) string {
	v := approval.VisibleLine
	return fmt.Sprintf("%s/%s  %s “%s”  %s", v(r.Gateway), v(approval.SessionID(r.StoredID, r.ID)), source.WordsOf(r.Transport).Conversation, v(r.Name), v(service.RunDoing(r.Tool, r.Title)))
}

func cmdAsk(e *env, args []string) error {
	fs := newFlags("ask", e)
	ctl := controlFlag(fs)
	session := fs.String("session", "", "session to prompt (live or stored id); default: a new session")
	d := addDirectFlags(fs, "the gateway: a name the running Herald knows, or a URL to talk to directly")
	wait := fs.Duration("wait", 10*time.Minute, "with --gateway URL or --api: how long to wait for the answer")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	text := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(text) == "" {
		return usageError{`usage: herald ask [--session ID] "what the agent should do"`}
	}
	out := &printer{w: e.stdout, json: *asJSON}
	req := service.AskRequest{Gateway: d.name(), Session: *session, Text: text}
	if !d.direct() {
		ctx, cancel := context.WithTimeout(e.ctx, 40*time.Second)
		defer cancel()
		resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "ask", Gateway: req.Gateway, Session: req.Session, Text: req.Text, Surface: "cli"})
		if err != nil {
			if errors.Is(err, service.ErrNoDaemon) {
				return fmt.Errorf("%v, or give --gateway URL / --api URL to ask directly", err)
			}
			return err
		}
		return printAsk(out, *resp.Ask)
	}
	ctx, cancel := context.WithTimeout(e.ctx, *wait+*d.connectTimeout)
	defer cancel()
	// Turn ends by session, kept from the start: the end of a quick turn
	// may arrive before Ask has returned the session id.
	var mu sync.Mutex
	ends := map[string]wire.Event{}
	asks := map[string][]wire.Event{} // what a turn waits for, by session
	woke := make(chan struct{}, 1)
	onEvent := func(ev wire.Event) {
		mu.Lock()
		switch {
		case turnEnd(ev) && len(ends) < 64:
			ends[ev.Session] = ev
		case waitsOnUser(ev) && len(asks) < 64 && len(asks[ev.Session]) < 8:
			asks[ev.Session] = append(asks[ev.Session], ev)
		default:
			mu.Unlock()
			return
		}
		mu.Unlock()
		select {
		case woke <- struct{}{}:
		default:
		}
	}
	svc, name, stop, err := d.connect(ctx, e, out, onEvent)
	if err != nil {
		return err
	}
	defer stop()
	req.Gateway = name
	res, err := svc.Ask(ctx, req)
	if err != nil {
		return err
	}
	if err := printAsk(out, res); err != nil {
		return err
	}
	word := source.WordsOf(res.Transport).Conversation
	for {
		mu.Lock()
		ev, ok := ends[res.Session]
		waiting := asks[res.Session]
		asks[res.Session] = nil
		mu.Unlock()
		for _, w := range waiting {
			printWaiting(out, word, w)
		}
		if ok {
			printEnd(out, ev)
			return nil
		}
		select {
		case <-woke:
		case <-ctx.Done():
			follow := d.followHint(res)
			if e.ctx.Err() != nil {
				return fmt.Errorf("stopped waiting; the %s goes on in Hermes: follow it with %s", word, follow)
			}
			return fmt.Errorf("no answer within %s; the %s goes on in Hermes: follow it with %s", *wait, word, follow)
		}
	}
}

// waitsOnUser reports an event by which a turn waits on the user: an
// approval, a question, a password or a secret.
func waitsOnUser(ev wire.Event) bool {
	switch ev.Kind {
	case wire.ClarifyRequest, wire.SudoRequest, wire.SecretRequest:
		return true
	}
	return ev.IsApproval()
}

// printWaiting says that the asked turn waits on the user, which a direct
// `herald ask` cannot answer, and where it can be answered.
func printWaiting(out *printer, word string, ev wire.Event) {
	if out.json {
		out.record(jsonRecord{Type: "event", Event: &ev})
		return
	}
	what := "an answer"
	switch ev.Kind {
	case wire.ClarifyRequest:
		what = "an answer to a question"
		if c, ok := ev.Data.(*wire.ClarifyPayload); ok && c.Question != "" {
			what += ": " + oneLine(c.Question)
		}
	case wire.SudoRequest:
		what = "a sudo password"
	case wire.SecretRequest:
		what = "a secret"
	}
	if a, ok := ev.Approval(); ok {
		what = "an approval"
		if a.Command != "" {
			what += " of: " + oneLine(approval.VisibleCommandLine(a.Command))
		}
	}
	out.line("⏸ the %s waits for %s", word, what)
	out.line("  herald ask cannot answer it: answer it in Hermes, or start `herald watch` first and ask through it (herald ask without --gateway URL or --api URL)")
}

// followHint is the command that follows the asked session or run.
func (d *directFlags) followHint(r service.AskResult) string {
	id := r.StoredSession
	if id == "" {
		id = r.Session
	}
	if *d.api != "" {
		return fmt.Sprintf("`herald watch --api %s --run %s`", *d.api, approval.VisibleLine(r.Session))
	}
	return fmt.Sprintf("`herald watch --gateway %s --session %s`", *d.gateway, approval.VisibleLine(id))
}

func turnEnd(ev wire.Event) bool { return wire.IsTurnEnd(ev.Kind) }

func printAsk(out *printer, r service.AskResult) error {
	if out.json {
		out.record(map[string]any{"type": "ask", "ask": r})
		return nil
	}
	// The session or run by its one name, as every surface says it; its
	// id (the form surfaces show, approval.SessionID) after it, for
	// typing.
	v := approval.VisibleLine
	id := approval.SessionID(r.StoredSession, r.Session)
	if !r.NewSession && r.StoredSession != "" && r.StoredSession != r.Session && source.WordsOf(r.Transport).Conversation == "run" {
		// A turn (a run) of a stored session (an API server's chat
		// stream): the turn's id, for herald stop, and the session's.
		id = r.Session + ", in session " + r.StoredSession
	}
	where := v(r.Gateway) + " · " + v(id)
	if r.Name != "" {
		where = v(r.Gateway) + " · “" + v(r.Name) + "” (" + v(id) + ")"
	}
	if r.NewSession {
		// "new run" on an API server: the transport's word.
		where = v(r.Gateway) + ": new " + source.WordsOf(r.Transport).Conversation + " " + strings.TrimPrefix(where, v(r.Gateway)+" · ")
	}
	out.line("%s: %s (confirmed by the gateway)", where, approval.VisibleLine(r.Status))
	if r.Note != "" {
		out.line("note: %s", approval.VisibleLine(r.Note))
	}
	return nil
}

func printEnd(out *printer, ev wire.Event) {
	if out.json {
		out.record(jsonRecord{Type: "event", Event: &ev})
		return
	}
	switch d := ev.Data.(type) {
	case *wire.CompletePayload:
		out.line("turn %s:", approval.VisibleLine(d.Status))
		out.line("%s", approval.Visible(d.Text))
	case wire.RunOutcome:
		status, text := d.Outcome()
		out.line("run %s:", approval.VisibleLine(status))
		out.line("%s", approval.Visible(text))
	default:
		out.line("%s", approval.VisibleLine(ev.Kind))
	}
}

// printNotice prints a Hermes notice (notification.show / .clear) of the
// session whose one name is name; it reports whether ev was one.
func printNotice(out *printer, ev wire.Event, name string) bool {
	switch d := ev.Data.(type) {
	case *wire.NotificationPayload:
		if out.json {
			out.record(jsonRecord{Type: "event", Event: &ev})
			return true
		}
		mark := map[string]string{wire.NoticeInfo: "ℹ", wire.NoticeWarn: "⚠", wire.NoticeError: "✗", wire.NoticeSuccess: "✓"}[wire.NormalLevel(d.Level)]
		text, _ := approval.Truncate(d.Text, 400)
		out.line("  %s %s %s", sessionWhere(ev.Gateway, ev.Session, ev.StoredSession, name), mark, approval.VisibleLine(text))
		return true
	case *wire.NotificationClearPayload:
		if out.json {
			out.record(jsonRecord{Type: "event", Event: &ev})
		}
		return true
	}
	return false
}

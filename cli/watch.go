package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// writeJSON prints v as indented JSON, made safe to print (surface.JSON:
// C1 and format characters escaped, nesting capped).
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(surface.JSON(b), '\n'))
	return err
}

// printer serializes output lines from many goroutines.
type printer struct {
	mu   sync.Mutex
	w    io.Writer
	json bool
	// refused counts approvals refused per gateway during floods (see
	// printRefused).
	refused map[string]int
	// stopped, when set, reports that the command is ending (Ctrl-C):
	// what the shutdown itself causes (links closing) is not news.
	stopped func() bool
	// name, when set, is a session's one name (the running service's
	// SessionName); an attached watch gets it with each event instead
	// (service.Notify.Name).
	name func(gw, live, stored string) string
}

// sessionName is the one name of ev's session: name when the stream
// brought it (an attached watch), else this process's service's, else "".
func (p *printer) sessionName(ev wire.Event, name string) string {
	if name == "" && p.name != nil && (ev.Session != "" || ev.StoredSession != "") {
		name = p.name(ev.Gateway, ev.Session, ev.StoredSession)
	}
	return name
}

// sessionWhere is "gateway · session" as the feed names a session: its
// one name, else (no name known) its id as surfaces show it
// (approval.SessionID).
func sessionWhere(gw, live, stored, name string) string {
	if name == "" {
		name = approval.SessionID(stored, live)
	}
	return approval.VisibleLine(gw) + " · " + approval.VisibleLine(name)
}

func (p *printer) quiet() bool { return p.stopped != nil && p.stopped() }

// line prints one line for people. With --json it is a message record
// instead, so that every line watch prints stays JSON.
func (p *printer) line(format string, args ...any) {
	if p.quiet() {
		return
	}
	if p.json {
		p.record(jsonRecord{Type: "message", Text: fmt.Sprintf(format, args...)})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// problem prints a gateway's problem: "! NAME: what", or with --json a
// problem record naming the gateway.
func (p *printer) problem(source string, err error) {
	text := approval.VisibleLine(err.Error())
	if p.json {
		p.record(jsonRecord{Type: "problem", Gateway: source, Text: text})
		return
	}
	p.line("! %s: %s", source, text)
}

func (p *printer) record(v any) {
	if p.quiet() {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.w.Write(append(surface.JSON(b), '\n'))
}

// jsonRecord is one line of `herald watch --json`.
type jsonRecord struct {
	Type  string      `json:"type"` // event | approval | status | notice | problem | message
	Event *wire.Event `json:"event,omitempty"`
	// Name is an event's session's one name (service.SessionNames).
	Name    string            `json:"name,omitempty"`
	Change  string            `json:"change,omitempty"`
	ID      string            `json:"id,omitempty"`      // approval short id, for herald approve
	Request *approval.Request `json:"request,omitempty"` // exactly as the gateway sent it
	Display *approval.Display `json:"display,omitempty"` // what the terminal shows of Request
	Status  *source.Status    `json:"status,omitempty"`
	// Notice is a session found, offered, followed or taken elsewhere.
	Notice *service.SessionNotice `json:"notice,omitempty"`
	// Gateway and Text are a problem's source and what went wrong, or
	// Text a message's line as the terminal would show it.
	Gateway string `json:"gateway,omitempty"`
	Text    string `json:"text,omitempty"`
}

// watchFlags are `herald watch`'s flags.
type watchFlags struct {
	// urls are the servers named by each transport's own flag
	// (source.Driver.Flag: --gateway, --api), in the drivers' order.
	urls                 []*kindURLs
	sessions, runs       multi
	srcs                 multi // --source KIND:[NAME=]URL
	creds                *credFlags
	attachActive, asJSON *bool
	demo, withBridge     *bool
	followMode, startRun *string
	ctl, db              *string
	// dbErr says why there is no default history file (no configuration
	// folder); it matters only when watch keeps one.
	dbErr error
	// given are the flags set on the command line.
	given map[string]bool
}

// cmdWatch is `herald watch`: the named steps below, in order. Without a
// server of its own, beside a running Herald, it attaches to that one
// instead (attach.go).
func cmdWatch(e *env, args []string) error {
	f, err := parseWatchFlags(e, args)
	if err != nil {
		return err
	}
	if f.attaches() {
		if attached, err := tryAttach(e, f); attached {
			return err
		}
	}
	if !*f.demo && !f.given["db"] && f.dbErr != nil {
		return fmt.Errorf("%w (or give --db FILE, or --db \"\" to keep no history)", f.dbErr)
	}
	if *f.demo && !f.given["db"] {
		dir, err := demoHistory(f.db)
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	cr, err := f.credentials(e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	out := &printer{w: e.stdout, json: *f.asJSON, stopped: func() bool { return ctx.Err() != nil }}
	store, err := openHistory(*f.db)
	if err != nil {
		return err
	}
	if store != nil {
		defer store.Close()
	}
	cfg, err := f.serviceConfig(e)
	if err != nil {
		return err
	}
	if store != nil {
		cfg.Store = store
	}
	st := newWatchStatus(out)
	st.given = func(kind string) bool { return cr.secret(source.Kind(kind)) != "" }
	keys := &keys{out: out, now: time.Now}
	svc := service.New(cfg)
	out.name = svc.SessionName
	keys.in = svcInbox{svc}
	printed := printNotifications(out, keys, svc.Subscribe(service.WatchEvents|service.WatchApprovals|service.WatchNotices|service.WatchProblems, 0))
	defer func() {
		svc.Close()
		<-printed // everything the service delivered is on screen
	}()
	if err := f.serveControl(ctx, svc, out); err != nil {
		return err
	}
	var demoSrv *hermestest.Server
	if *f.demo {
		demoSrv = f.startDemo(out, &cr)
		defer demoSrv.Close()
	}
	wsNames, err := f.addSources(ctx, svc, out, f.sourceConfigs(cr, st.onStatus))
	if err != nil {
		return err
	}
	if *f.startRun != "" {
		go f.startFirstRun(ctx, svc, out, st.fail)
	}
	// Drive the demo once its gateway is connected. Sessions other
	// clients drive are found and followed (or offered) by the service.
	if demoSrv != nil {
		go follow(ctx, out, svc, wsNames, st.connected, demoSrv)
	}
	return answerKeys(ctx, e, out, localSessions{svc}, keys, st.fatal)
}

// parseWatchFlags reads the command line.
func parseWatchFlags(e *env, args []string) (*watchFlags, error) {
	fs := newFlags("watch", e)
	f := &watchFlags{given: map[string]bool{}}
	f.urls = addURLFlags(fs)
	fs.Var(&f.sessions, "session", "stored session id to follow (repeatable)")
	f.creds = addCredFlags(fs)
	f.attachActive = fs.Bool("attach-active", false, "same as --follow auto: follow every session found on the gateways, now and later (on a gateway that sends each session's events to one client at a time, this moves their live events away from other clients)")
	f.followMode = fs.String("follow", "ask", "sessions other clients drive: ask (list and offer them; type follow ID) or auto (follow each one found)")
	f.asJSON = fs.Bool("json", false, "print one JSON record per line instead of text")
	f.demo = fs.Bool("demo", false, "start an embedded demo gateway with a scripted session (no Hermes needed)")
	fs.Var(&f.srcs, "source", "a server of any kind Herald knows, as KIND:URL or KIND:NAME=URL (repeatable; e.g. apiserver:http://127.0.0.1:8642)")
	fs.Var(&f.runs, "run", "API-server run id to follow (repeatable; on the first --api server)")
	f.startRun = fs.String("start", "", "start a run with this input on the first --api server and follow it")
	f.withBridge = fs.Bool("bridge", false, "also follow each gateway's Herald bridge (the Hermes plugin herald; see herald bridge install): approvals from the Hermes CLI, TUI and messaging too")
	f.ctl = controlFlag(fs)
	dbPath, dbErr := defaultDB(e)
	f.db = fs.String("db", dbPath, `approval history file ("" keeps none)`)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unexpected argument %q; gateways go in --gateway", fs.Arg(0))}
	}
	for _, v := range f.srcs {
		if _, _, _, err := splitSource(v); err != nil {
			return nil, err
		}
	}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	f.dbErr = dbErr
	return f, nil
}

// demoHistory points db at a history of the demo's own: the demo's
// approvals are not the user's, and the demo then also works beside a
// running Herald (which holds the real history). The caller removes the
// returned folder.
func demoHistory(db *string) (dir string, err error) {
	dir, err = os.MkdirTemp("", "herald-demo-")
	if err != nil {
		return "", err
	}
	*db = filepath.Join(dir, "audit.db")
	return dir, nil
}

// credentials reads the secrets (flags, environment, files, stdin) and
// refuses to send them in clear text to another machine.
func (f *watchFlags) credentials(e *env) (creds, error) {
	cr, stdin, err := f.creds.resolve(e)
	if err != nil {
		return cr, err
	}
	e.stdin = stdin // keys follow a secret read from stdin
	if !*f.demo {
		for _, k := range f.urls {
			for _, v := range k.urls {
				_, u := splitGateway(v)
				if err := f.creds.checkURL(e, "--"+k.d.Flag, u, cr.secret(k.d.Kind)); err != nil {
					return cr, err
				}
			}
		}
	}
	for _, v := range f.srcs {
		kind, _, u, _ := splitSource(v)
		if err := f.creds.checkURL(e, "--source", u, cr.secret(kind)); err != nil {
			return cr, err
		}
	}
	if _, ok := f.runServer(); !ok && (len(f.runs) > 0 || *f.startRun != "") {
		return cr, usageError{fmt.Sprintf("--run and --start need a server that runs them: give %s", runFlags())}
	}
	return cr, nil
}

// openHistory opens the approval history (nil when db is "").
func openHistory(db string) (*approval.BoltStore, error) {
	if db == "" {
		return nil, nil
	}
	return approval.OpenStore(db, approval.StoreOptions{})
}

// serviceConfig is the follow policy and discovery interval asked for.
func (f *watchFlags) serviceConfig(e *env) (service.Config, error) {
	policy, err := service.ParseFollowPolicy(*f.followMode)
	if err != nil {
		return service.Config{}, usageError{err.Error()}
	}
	if *f.attachActive {
		policy = service.FollowAuto
	}
	// HERALD_DISCOVERY_INTERVAL lists sessions more often than the
	// default (with the liveness check, every 15 s).
	var every time.Duration
	if v := e.getenv("HERALD_DISCOVERY_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond {
			return service.Config{}, usageError{fmt.Sprintf("HERALD_DISCOVERY_INTERVAL=%q: give a duration of at least 100ms, like 5s", v)}
		}
		every = d
	}
	return service.Config{FollowPolicy: policy, DiscoveryInterval: every}, nil
}

// watchStatus shows the sources' statuses and carries a refusal that
// needs the user (a wrong key or password, a failed --start): watch exits
// non-zero with it instead of waiting forever.
type watchStatus struct {
	out *printer
	// given reports whether a secret was given for a source's kind.
	given     func(kind string) bool
	statuses  *statusPrinter
	fatal     chan error
	connected chan source.Status
}

func newWatchStatus(out *printer) *watchStatus {
	return &watchStatus{out: out, statuses: newStatusPrinter(out), fatal: make(chan error, 1), connected: make(chan source.Status, 64)}
}

func (w *watchStatus) fail(err error) {
	select {
	case w.fatal <- err:
	default:
	}
}

func (w *watchStatus) onStatus(s source.Status) {
	if needsUser(s) {
		if w.out.json {
			w.statuses.show(s)
		}
		w.fail(refusalGiven(s, w.given == nil || w.given(s.Kind)))
		return
	}
	w.statuses.show(s)
	select {
	case w.connected <- s:
	default:
	}
}

// serveControl opens the control socket first: when another Herald runs,
// stop before dialing (a resume here would take its sessions' live events
// on Hermes 0.18.2), and `herald approve` works once a gateway shows
// connected. Beside a running Herald the demo answers on a socket of its
// own.
func (f *watchFlags) serveControl(ctx context.Context, svc *service.Service, out *printer) error {
	err := svc.ServeControl(ctx, *f.ctl)
	if err == nil {
		return nil
	}
	if !*f.demo || f.given["control"] || !errors.Is(err, service.ErrAlreadyRunning) {
		return err
	}
	*f.ctl = filepath.Join(filepath.Dir(*f.ctl), fmt.Sprintf("demo-%d.sock", os.Getpid()))
	if err := svc.ServeControl(ctx, *f.ctl); err != nil {
		return err
	}
	if !out.json {
		out.line("Another Herald is running: this demo answers `herald pending --control %s` (and approve, log alike).", *f.ctl)
	}
	return nil
}

// startDemo starts the embedded demo gateway and points watch at it.
func (f *watchFlags) startDemo(out *printer, cr *creds) *hermestest.Server {
	demoSrv := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, StepDelay: 120 * time.Millisecond, Token: demoToken()})
	f.defaultURLs().urls = multi{"demo=" + demoSrv.URL}
	cr.byFlag = map[string]string{"token": demoSrv.Token()} // the demo's own, never the user's
	if !out.json {
		out.line("Demo gateway at %s: a scripted agent will ask for approvals. Answer with o/s/a/d + Enter.", demoSrv.URL)
		// The throwaway demo's token, so the window's Add gateway can
		// follow the demo too.
		out.line("  In the window: Add gateway, URL %s, token %s", demoSrv.URL, demoSrv.Token())
	}
	return demoSrv
}

// sourceConfigs are the servers to follow: those of each transport's
// flag, then --source's (the default transport at its default address
// when none is given).
func (f *watchFlags) sourceConfigs(cr creds, onStatus func(source.Status)) []service.SourceConfig {
	var configs []service.SourceConfig
	for _, s := range f.servers() {
		configs = append(configs, service.SourceConfig{Kind: s.kind, OnStatus: onStatus, Bridge: service.HasBridge(s.kind) && *f.withBridge && !*f.demo,
			Config: source.Config{Name: s.name, URL: s.url, Secrets: cr.secrets(s.kind), Username: cr.user, RootCAs: cr.roots}})
	}
	return configs
}

// server is one server to follow, as the flags name it.
type server struct {
	kind      source.Kind
	name, url string
}

// servers are those of each transport's flag, then --source's, or the
// default transport at its default address when none is given.
func (f *watchFlags) servers() []server {
	var out []server
	for _, k := range f.urls {
		for _, v := range k.urls {
			name, u := splitGateway(v)
			out = append(out, server{k.d.Kind, name, u})
		}
	}
	for _, v := range f.srcs {
		kind, name, u, _ := splitSource(v)
		out = append(out, server{kind, name, u})
	}
	if len(out) == 0 {
		d, _ := source.Lookup("")
		name, u := splitGateway(d.DefaultURL)
		out = append(out, server{d.Kind, name, u})
	}
	return out
}

// runServer is the name of the server --run and --start go to: the first
// one given whose transport starts runs and follows them by id (an API
// server).
func (f *watchFlags) runServer() (string, bool) {
	for _, s := range f.servers() {
		if o := source.OffersOf(string(s.kind)); o.StartsRuns && o.FollowByID {
			return s.name, true
		}
	}
	return "", false
}

// runFlags names the flags of the transports --run and --start need
// ("--api").
func runFlags() string {
	var flags []string
	for _, d := range source.Drivers() {
		if d.Offers.StartsRuns && d.Offers.FollowByID {
			flags = append(flags, "--"+d.Flag)
		}
	}
	return strings.Join(flags, " or ")
}

// kindURLs are the servers one transport's flag (Driver.Flag) names.
type kindURLs struct {
	d    source.Driver
	urls multi
}

// addURLFlags adds the flag of each transport that has one (--gateway,
// --api), worded from its driver.
func addURLFlags(fs *flag.FlagSet) []*kindURLs {
	var out []*kindURLs
	for _, d := range source.Drivers() {
		if d.Flag == "" {
			continue
		}
		k := &kindURLs{d: d}
		example := "e.g."
		if d.Default {
			example = "default"
		}
		fs.Var(&k.urls, d.Flag, fmt.Sprintf("%s URL, or NAME=URL (repeatable; %s %s)", d.Title, example, d.DefaultURL))
		out = append(out, k)
	}
	return out
}

// defaultURLs are the default transport's servers (the demo's).
func (f *watchFlags) defaultURLs() *kindURLs {
	for _, k := range f.urls {
		if k.d.Default {
			return k
		}
	}
	k := &kindURLs{}
	k.d, _ = source.Lookup("")
	f.urls = append(f.urls, k)
	return k
}

// splitSource reads --source's KIND:[NAME=]URL, the kind as any
// registered transport spells it.
func splitSource(v string) (kind service.Kind, name, u string, err error) {
	k, rest, ok := strings.Cut(v, ":")
	if !ok || rest == "" {
		return "", "", "", usageError{fmt.Sprintf("--source %s: give the kind first, as KIND:URL (e.g. apiserver:http://127.0.0.1:8642)", service.RedactURL(v))}
	}
	kind, err = service.ParseKind(k)
	if err != nil {
		return "", "", "", usageError{fmt.Sprintf("--source: %v", err)}
	}
	name, u = splitGateway(rest)
	return kind, name, u, nil
}

// addSources starts every source and follows the sessions and runs
// asked for (--run goes to the first server that runs them, see
// runServer). It returns the names of those that list sessions.
func (f *watchFlags) addSources(ctx context.Context, svc *service.Service, out *printer, configs []service.SourceConfig) ([]string, error) {
	var wsNames []string
	runs, _ := f.runServer()
	for _, cfg := range configs {
		lists := source.OffersOf(string(cfg.Kind)).ListsSessions
		if lists {
			// Only the --session ids still live on the gateway are
			// resumed; a notice names the others.
			cfg.Resume = f.sessions
		}
		src, err := svc.AddSource(cfg)
		if err != nil {
			return nil, err
		}
		if lists {
			wsNames = append(wsNames, src.Name())
		}
		if src.Name() != runs {
			continue
		}
		for _, id := range f.runs {
			if err := src.Follow(ctx, id); err != nil {
				out.problem(src.Name(), err)
			}
		}
	}
	return wsNames, nil
}

// startFirstRun starts --start's run on the first server that runs them.
func (f *watchFlags) startFirstRun(ctx context.Context, svc *service.Service, out *printer, fail func(error)) {
	name, _ := f.runServer()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	id, err := svc.StartRun(sctx, name, *f.startRun)
	if err != nil {
		if ctx.Err() == nil {
			var kind source.Kind // none: watch is ending and closed it
			if src, ok := svc.Source(name); ok {
				kind = src.Kind()
			}
			fail(startFailed(name, kind, err))
		}
		return
	}
	if !out.json {
		out.line("  %s: started run %s", name, id)
	}
}

// answerKeys reads stdin until watch ends: keys answer the approval on
// screen (see keys), session commands follow or take back sessions. A
// refusal that needs the user ends it with that error.
func answerKeys(ctx context.Context, e *env, out *printer, svc sessions, keys *keys, fatal <-chan error) error {
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(e.stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-fatal:
			return err
		case l, ok := <-lines:
			if !ok {
				lines = nil // stdin closed (e.g. a script): keep watching
				continue
			}
			if sessionCommand(ctx, out, svc, l) {
				continue
			}
			if quit := keys.handle(ctx, l); quit {
				return nil
			}
		}
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// splitGateway reads NAME=URL or URL (named by its host:port).
func splitGateway(g string) (name, u string) {
	if i := strings.Index(g, "="); i > 0 && !strings.Contains(g[:i], "/") {
		return g[:i], g[i+1:]
	}
	if pu, err := url.Parse(g); err == nil && pu.Host != "" {
		return pu.Host, g
	}
	return g, g
}

// notifications is a stream of the service's notifications: a
// Subscription in this process, or the running Herald's over the control
// socket (service.WatchStream).
type notifications interface {
	Next(ctx context.Context) (service.Notify, error)
}

// feed prints what a stream of notifications delivers, in order: every
// surface of watch reads it the same way, its own service's or a running
// Herald's.
type feed struct {
	out  *printer
	keys *keys
	// statuses shows the sources' statuses; nil when they come another
	// way (watch's own sources, through their OnStatus).
	statuses *attachedStatus
	// mirror keeps the running Herald's waiting requests (attached).
	mirror *remoteInbox
}

// run prints until the stream ends and returns why.
func (f *feed) run(ctx context.Context, sub notifications) error {
	for {
		n, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		f.show(n)
	}
}

func (f *feed) show(n service.Notify) {
	out := f.out
	if n.Lagged > 0 {
		out.problem("herald", fmt.Errorf("this terminal fell behind: %d notifications were not shown; run `herald pending` to see what waits", n.Lagged))
		if f.mirror != nil {
			f.mirror.refresh()
		}
	}
	switch {
	case n.Event != nil:
		printEvent(out, *n.Event, n.Name)
	case n.Approval != nil:
		if f.mirror != nil && f.mirror.apply(*n.Approval) {
			return // on screen already, from the running Herald's View
		}
		printApproval(out, f.keys, *n.Approval)
	case n.Notice != nil:
		printSessionNotice(out, *n.Notice)
	case n.Problem != nil:
		out.problem(n.Problem.Source, n.Problem.Err)
	case n.Status != nil && f.statuses != nil:
		f.statuses.show(*n.Status)
	}
}

// printNotifications prints what the service delivers, in order, until it
// closes; the returned channel is closed then.
func printNotifications(out *printer, keys *keys, sub *service.Subscription) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&feed{out: out, keys: keys}).run(context.Background(), sub)
	}()
	return done
}

// follow starts the demo once its gateway is connected.
func follow(ctx context.Context, out *printer, svc *service.Service, names []string, statusCh <-chan source.Status, demo *hermestest.Server) {
	done := map[string]bool{}
	for len(done) < len(names) {
		var st source.Status
		select {
		case <-ctx.Done():
			return
		case st = <-statusCh:
		}
		if st.State != source.StateConnected || done[st.Gateway] {
			continue
		}
		done[st.Gateway] = true
		go runDemo(ctx, out, svc, st.Gateway, demo)
	}
}

// runDemo drives the demo gateway's scripted agent in a loop, through the
// service like `herald ask`.
func runDemo(ctx context.Context, out *printer, svc *service.Service, name string, demo *hermestest.Server) {
	script := []string{"hello there", "approve-me: rm -rf ./build", "clarify: Deploy the build now?", "burst 12", "approve-me: git push --force origin main", "sudo: apt-get install jq", "approve-me: curl -H 'Authorization: Bearer sk-demo1234567890abcdef' https://example.invalid"}
	session := ""
	for i := 0; ctx.Err() == nil; i++ {
		res, err := svc.Ask(ctx, service.AskRequest{Gateway: name, Session: session, Text: script[i%len(script)]})
		switch {
		case errors.Is(err, context.Canceled):
			return
		case err != nil:
			out.line("! demo: %v", err)
		default:
			session = res.Session
		}
		// Wait for the turn to finish (the agent waits for approvals).
		for ctx.Err() == nil {
			tick := time.NewTimer(400 * time.Millisecond)
			select {
			case <-ctx.Done():
				tick.Stop()
				return
			case <-tick.C:
			}
			if !demoRunning(demo, session) {
				break
			}
		}
	}
}

// demoRunning reports whether the demo's session has a turn under way.
func demoRunning(demo *hermestest.Server, id string) bool {
	for _, s := range demo.Sessions() {
		if s.ID == id {
			return s.Running
		}
	}
	return false
}

// printEvent prints one event of a session whose one name is name ("":
// the printer's, or none known).
func printEvent(out *printer, ev wire.Event, name string) {
	name = out.sessionName(ev, name)
	if out.json {
		out.record(jsonRecord{Type: "event", Event: &ev, Name: name})
		return
	}
	if printNotice(out, ev, name) {
		return
	}
	where := sessionWhere(ev.Gateway, ev.Session, ev.StoredSession, name)
	v := approval.VisibleLine
	switch d := ev.Data.(type) {
	case *wire.ToolStartPayload:
		out.line("  %s ▶ %s %s", where, v(d.Name), v(approval.Redact(d.Context)))
	case *wire.ToolCompletePayload:
		out.line("  %s ■ %s done (%.1fs)", where, v(d.Name), d.Duration)
	case *wire.CompletePayload:
		out.line("  %s ✓ turn %s: %s", where, v(d.Status), oneLine(d.Text))
	case *wire.StatusPayload:
		out.line("  %s · %s", where, v(d.Text))
	case *wire.ErrorPayload:
		out.line("  %s ! %s", where, v(d.Message))
	case *wire.ResyncPayload:
		out.line("  %s ⚠ events may have been missed: %s", where, service.MissedText(d.Reason))
	default:
		switch {
		case ev.Kind == wire.SessionGone:
			out.line("  %s ○ gone from the gateway (it restarted): no longer following it", where)
		case strings.HasPrefix(ev.Kind, "run."):
			out.line("  %s ● %s", where, v(strings.ReplaceAll(ev.Kind, ".", " "))) // "run completed"
		}
	}
}

// oneLine is the start of an agent's text on one line, for the feed.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if cut, ok := approval.Truncate(s, 100); ok {
		return approval.VisibleLine(cut) + "…"
	}
	return approval.VisibleLine(s)
}

func printApproval(out *printer, k *keys, c approval.Change) {
	r := c.Request
	id := service.ShortKey(r.Key)
	if out.json {
		d := r.Display()
		out.record(jsonRecord{Type: "approval", Change: string(c.Kind), ID: id, Request: &r, Display: &d})
		return
	}
	if r.Kind.IsPrompt() {
		printPrompt(out, id, c)
		return
	}
	switch {
	case c.Kind == approval.ChangeRefused:
		printRefused(out, r, c.Refused)
	case c.Kind == approval.ChangeArrived:
		k.arrival(r)
	case c.Kind == approval.ChangeUpdated:
		first := r.CommandFirstLine()
		switch r.State {
		case approval.StateResolved:
			if r.Outcome.Surface == "terminal" {
				return // answered here: the key handler's ✓ line says so once
			}
			out.line("  %s %s: confirmed by the gateway (from %s): %s", id, approval.VisibleLine(r.Outcome.Choice), approval.VisibleLine(r.Outcome.Surface), first)
		case approval.StateExpired:
			out.line("  %s timed out, the command did not run: %s", id, first)
		case approval.StateCancelled:
			out.line("  %s cancelled (%s): %s", id, approval.VisibleLine(string(r.Outcome.Reason)), first)
		case approval.StateSentUnknown:
			out.line("  %s %s %s: %s", id, approval.VisibleLine(r.Outcome.Choice), approval.VisibleLine(r.SentDetail()), first)
		case approval.StateOutcomeUnknown:
			out.line("  %s %s: %s", id, approval.VisibleLine(r.Outcome.Detail), first)
		case approval.StatePending:
			if r.LastError != "" {
				out.line("  %s not sent: %s", id, approval.VisibleLine(r.LastError))
			} else if r.Uncertain {
				out.line("  %s may still be pending (events may have been missed)", id)
			} else if r.Conflict != "" {
				out.line("  %s ⚠ %s; only deny is accepted", id, surface.Line(r.Conflict))
			} else if r.Unbound != "" {
				out.line("  %s ⚠ deny only: %s", id, surface.Line(r.Unbound))
			}
		}
	}
}

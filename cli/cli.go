// Package cli is Herald's terminal surface: `herald watch` (a live feed of
// sessions, tool activity and approvals, answered with keys), `herald
// approve`, `herald pending` and `herald log`. It runs on the same service
// core as the desktop app, reads the service's event stream, and names no
// transport (kinds and defaults come from backend/source's drivers).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// commands are the subcommands Main handles.
var commands = map[string]func(*env, []string) error{
	"watch":    cmdWatch,
	"approve":  cmdApprove,
	"pending":  cmdPending,
	"log":      cmdLog,
	"stop":     cmdStop,
	"ask":      cmdAsk,
	"sessions": cmdSessions,
	"bridge":   cmdBridge,
	"help":     cmdHelp,
}

// IsCommand reports whether name is a terminal subcommand (so main runs
// the CLI instead of the window).
func IsCommand(name string) bool {
	_, ok := commands[name]
	return ok || name == "-h" || name == "--help"
}

// env is what a command may use; tests substitute all of it.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// Main runs a subcommand and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Every byte the CLI prints goes through the terminal encoder, errors
	// included: a gateway's text that some path did not pass through
	// approval.Visible still cannot drive the terminal.
	stdout, stderr = surface.TerminalWriter(stdout), surface.TerminalWriter(stderr)
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		cmdHelp(e, nil)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "herald: unknown command %q; run `herald help`\n", args[0])
		return 2
	}
	if err := cmd(e, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			msg := err.Error()
			if err == context.Canceled {
				msg = "interrupted"
			}
			fmt.Fprintf(stderr, "herald %s: %s\n", args[0], msg)
			return 130 // as a shell reports Ctrl-C
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "herald %s: %v\n", args[0], err)
			return 2
		}
		fmt.Fprintf(stderr, "herald %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func cmdHelp(e *env, _ []string) error {
	fmt.Fprint(e.stdout, `Herald: a live companion for Hermes Agent.

Usage:
  herald [--hidden] [--no-tray]   open the desktop window (--hidden: start in
                                  the tray; --no-tray: without a tray icon)
  herald watch [flags]            live feed of sessions, tools and approvals
  herald pending                  list approvals waiting for an answer
  herald approve ID CHOICE        answer one (CHOICE: once, session, always, deny)
  herald answer ID [TEXT|N]       answer a question; a password or secret is typed with echo off
  herald log [-n N]               the approval history
  herald stop [ID]                stop a run (without ID: list the active runs)
  herald ask [--session ID] TEXT  start a prompt on a session or a new one
  herald sessions                 an API server's stored sessions, which ask --session continues
  herald bridge install           how to bring approvals from every Hermes surface
                                  (CLI, Telegram, ...) to Herald; --write HERMES_HOME applies it
  herald version                  print the version and exit

Run "herald watch -h" for its flags. Credentials come from the environment
(HERALD_TOKEN, HERALD_PASSWORD, HERALD_USERNAME, HERALD_API_KEY), from files
(--token-file, --password-file, --api-key-file; "-" reads stdin) or from flags
(--token, --password, --api-key: visible to other local users in ps), and are
never printed or logged. Herald refuses to send them over plain http:// to
another machine unless you pass --allow-insecure.
`)
	return nil
}

func controlFlag(fs *flag.FlagSet) *string {
	return fs.String("control", service.DefaultControlPath(), "control socket of the running Herald")
}

func cmdPending(e *env, args []string) error {
	fs := newFlags("pending", e)
	ctl := controlFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "pending"})
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]approvalJSON, 0, len(resp.Pending))
		for _, r := range resp.Pending {
			out = append(out, approvalJSON{Request: r, Display: r.Display()})
		}
		return writeJSON(e.stdout, out)
	}
	if len(resp.Pending) == 0 {
		fmt.Fprintln(e.stdout, "No approvals are waiting.")
		return nil
	}
	for _, r := range resp.Pending {
		fmt.Fprintln(e.stdout, pendingLine(r, time.Now()))
	}
	return nil
}

func cmdApprove(e *env, args []string) error {
	fs := newFlags("approve", e)
	ctl := controlFlag(fs)
	yes := fs.Bool("yes-always", false, `confirm an "always" answer (required for always)`)
	yesHidden := fs.Bool("yes-hidden", false, "confirm approving a command Hermes partly hid (required for once, session or always on such a command)")
	// Flags may come before or after the id and choice.
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	if len(pos) != 2 {
		return usageError{"usage: herald approve ID CHOICE (CHOICE: once, session, always, deny)"}
	}
	id, choice := pos[0], strings.ToLower(pos[1])
	if !source.IsChoice(choice) {
		return usageError{fmt.Sprintf("%q is not a choice: use once, session, always or deny", pos[1])}
	}
	if choice == "always" && !*yes {
		return usageError{`"always" allows this command pattern from now on without asking; confirm with --yes-always`}
	}
	ctx, cancel := context.WithTimeout(e.ctx, 40*time.Second)
	defer cancel()
	if choice != "deny" && !*yesHidden {
		if err := refuseHidden(ctx, *ctl, id, choice, *yes); err != nil {
			return err
		}
	}
	resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "approve", Key: id, Choice: choice, ConfirmAlways: *yes, ConfirmHidden: *yesHidden, Surface: "cli"})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: %s confirmed by the gateway, for: %s\n", service.ShortKey(resp.Request.Key), choice, resp.Request.CommandFirstLine())
	return nil
}

// refuseHidden refuses, before anything is sent, to approve the waiting
// request id names when Hermes hid part of its command, saying what is
// hidden and how to confirm. The running Herald refuses too; this says
// which flag confirms it.
func refuseHidden(ctx context.Context, ctl, id, choice string, always bool) error {
	resp, err := service.Control(ctx, ctl, service.ControlRequest{Op: "pending"})
	if err != nil {
		return err
	}
	r, err := findPending(resp.Pending, id)
	if err != nil || r.Hidden() == "" {
		return nil // the running Herald says what is wrong with id
	}
	again := fmt.Sprintf("herald approve %s %s --yes-hidden", id, choice)
	if always {
		again += " --yes-always"
	}
	return usageError{fmt.Sprintf("%s. %s. Nothing was sent. To approve it without seeing that part: %s", r.Hidden(), approval.HiddenWhy, again)}
}

func cmdLog(e *env, args []string) error {
	fs := newFlags("log", e)
	ctl := controlFlag(fs)
	dbPath, dbErr := defaultDB(e)
	db := fs.String("db", dbPath, "approval history file (used when no Herald is running)")
	n := fs.Int("n", 50, "show the newest N requests (with --all or --json: entries)")
	all := fs.Bool("all", false, "every change of every request (arrived, answering, resolved), not one line per request")
	asJSON := fs.Bool("json", false, "print JSON (every entry, as with --all)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *asJSON {
		*all = true
	}
	limit := *n
	if !*all && limit > 0 {
		limit *= entriesPerRequest // enough entries for N requests
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	var entries []service.LogEntry
	resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "log", Limit: limit})
	switch {
	case err == nil:
		entries = resp.Log
	case errors.Is(err, service.ErrNoDaemon):
		if *db == "" && dbErr != nil {
			return fmt.Errorf("no running Herald, and no history file to read: %w", dbErr)
		}
		if _, statErr := os.Stat(*db); errors.Is(statErr, os.ErrNotExist) {
			fmt.Fprintf(e.stdout, "No approval history yet (Herald has not recorded one at %s).\n", *db)
			return nil
		}
		st, err := approval.OpenStore(*db, approval.StoreOptions{})
		if err != nil {
			return err
		}
		defer st.Close()
		es, err := st.List(approval.Filter{Limit: limit})
		if err != nil {
			return err
		}
		// No live view without Herald: each session is named by the
		// title recorded with its request, else its id.
		entries = service.NamedEntries(es, nil)
	default:
		return err
	}
	if *asJSON {
		out := make([]entryJSON, 0, len(entries))
		for _, en := range entries {
			j := entryJSON{LogEntry: en}
			if en.Command != "" {
				j.Display = en.DisplayCommand()
			}
			out = append(out, j)
		}
		return writeJSON(e.stdout, out)
	}
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "No approval history yet: no request has reached Herald.")
		return nil
	}
	if !*all {
		entries = onePerRequest(entries)
		if *n > 0 && len(entries) > *n {
			entries = entries[len(entries)-*n:]
		}
	}
	for _, en := range entries {
		fmt.Fprintln(e.stdout, logLine(en))
	}
	return nil
}

// entriesPerRequest is how many history entries `herald log -n N` reads
// for each of the N requests it shows: a request's changes (arrived,
// answering, resolved; an update or two) rarely reach it.
const entriesPerRequest = 8

// onePerRequest keeps each request's latest entry, which carries its
// outcome, in the order of those entries (oldest first), with the
// command, session name and question of an earlier entry where the latest
// one has none: one "resolved once" line per request, not three of which
// one reads "pending". Entries without a request key stay as they are.
func onePerRequest(es []service.LogEntry) []service.LogEntry {
	latest := map[string]int{}
	known := map[string]service.LogEntry{} // per request, the first of each field given
	for i, e := range es {
		latest[e.Key] = i
		k := known[e.Key]
		if k.Command == "" {
			k.Command, k.MaskedCommand = e.Command, e.MaskedCommand
		}
		k.SessionName = firstNonEmpty(k.SessionName, e.SessionName)
		k.Question = firstNonEmpty(k.Question, e.Question)
		known[e.Key] = k
	}
	var out []service.LogEntry
	for i, e := range es {
		if e.Key != "" && latest[e.Key] != i {
			continue
		}
		if k := known[e.Key]; e.Key != "" {
			if e.Command == "" {
				e.Command, e.MaskedCommand = k.Command, k.MaskedCommand
			}
			e.SessionName = firstNonEmpty(e.SessionName, k.SessionName)
			e.Question = firstNonEmpty(e.Question, k.Question)
		}
		out = append(out, e)
	}
	return out
}

// defaultDB is the approval history the desktop app and watch write, and
// log reads: service.HistoryPath, which $HERALD_CONFIG_DIR moves. Without
// a configuration folder it is "" and the error says why.
func defaultDB(e *env) (string, error) {
	return service.HistoryPath(e.getenv)
}

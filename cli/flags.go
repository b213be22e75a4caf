package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/herald-desktop/herald/backend/source"
)

// commandHelp is what `herald NAME --help` prints around the flags.
type commandHelp struct {
	usage    string // after "Usage: herald "
	about    string
	examples string
}

var helps = map[string]commandHelp{
	"watch": {
		usage: "watch [flags]",
		about: `Connects to Hermes gateways and API servers and prints a live feed of their
sessions, tools and approvals. Answer the approval shown last with o (once),
s (session), a (always; asks you to type yes) or d (deny) and Enter, or add its
id: d 514845d4. Also: sessions, follow ID, unfollow ID, take ID, and for a
question its choice number or t YOUR ANSWER.

Beside a running Herald (the desktop app, or another watch), watch with no
server, session or run of its own attaches to it: it shows that Herald's
gateways, events, approvals and questions, and answers them there; q leaves
this terminal, Herald keeps running.

A gateway it cannot reach is retried with a countdown (retrying in 4s), and
every 30 s while it stays down it says it is still retrying. A refused token,
password or key ends watch with one line saying which flag to fix.`,
		examples: `  herald watch                                 # beside the desktop app: its feed, answered here
  herald watch --demo                          # a built-in demo gateway: no Hermes needed
  herald watch --gateway http://127.0.0.1:9119 --token-file ~/.config/hermes-token
  herald watch --gateway lab=https://lab.example:9119 --username me --password-file -
  herald watch --api http://127.0.0.1:8642 --start "clean the build dir"
  herald watch --api http://127.0.0.1:8642 --run run_4f2a…   # a run started elsewhere (curl, a script)
  herald watch --follow auto --json            # follow every session, one JSON record per line`,
	},
	"pending": {usage: "pending [flags]", about: "Lists the approvals and questions waiting in the running Herald.",
		examples: "  herald pending\n  herald pending --json"},
	"approve": {usage: "approve [flags] ID CHOICE", about: "Answers an approval waiting in the running Herald. CHOICE is once, session,\nalways (with --yes-always) or deny; `herald pending` lists the ids. A command\nHermes partly hid (it masks what looks like a secret, and runs it unmasked) is\napproved only with --yes-hidden.",
		examples: "  herald approve 514845d4 once\n  herald approve 514845d4 always --yes-always\n  herald approve 514845d4 once --yes-hidden   # Hermes hid part of the command"},
	"answer": {usage: "answer [flags] ID [TEXT | CHOICE-NUMBER]", about: "Answers a question, or a sudo password or secret request (typed with echo off,\nnever taken from the command line).",
		examples: "  herald answer 7c1e02aa 2\n  herald answer 7c1e02aa staging please\n  herald answer 9d0b41f3            # a password: typed with echo off\n  herald answer 9d0b41f3 --decline"},
	"log": {usage: "log [flags]", about: "Prints the approval history, one line per request with its outcome: from the\nrunning Herald, or from the history file when none runs.",
		examples: "  herald log\n  herald log --all -n 200    # every change of every request\n  herald log -n 200 --json"},
	"stop": {usage: "stop [flags] [ID]", about: `Stops a run: interrupts a Hermes session's turn (session.interrupt) or stops
an API-server run (POST /v1/runs/ID/stop), and returns once the gateway
confirms. ID is a session or run id (or a unique prefix, or GATEWAY/ID).
Without ID it lists the active runs the running Herald sees.`,
		examples: "  herald stop\n  herald stop 20261202_100136_258fb5\n  herald stop --api http://127.0.0.1:8642 run_4f2a…"},
	"ask": {usage: "ask [flags] TEXT...", about: `Starts a prompt on a session (--session) or a new one. Through the running
Herald (default) the turn shows there; with --gateway URL or --api URL Herald
connects itself and prints the answer when the turn ends.
On a gateway that sends each session's events to one client at a time, a
prompt makes Herald that client: others showing the session stop receiving
its events.`,
		examples: `  herald ask "run the tests"
  herald ask --session 20261202_100136_258fb5 "and now the linter"
  herald ask --gateway http://127.0.0.1:9119 "hello"`},
}

// newFlags is a command's flag set: --help prints its help (to stdout, in
// --flag style, with examples); a bad flag is one line (see parseFlags).
func newFlags(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("herald "+name, flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	fs.Usage = func() {
		h := helps[name]
		w := fs.Output()
		fmt.Fprintf(w, "Usage: herald %s\n\n", firstNonEmpty(h.usage, name+" [flags]"))
		if h.about != "" {
			fmt.Fprintf(w, "%s\n\n", h.about)
		}
		fmt.Fprintln(w, "Flags:")
		printFlags(w, fs)
		if h.examples != "" {
			fmt.Fprintf(w, "\nExamples:\n%s\n", h.examples)
		}
	}
	return fs
}

// parseFlags parses args. A flag that is unknown, lacks its value or has a
// bad one is a usage error of one line naming it the way it is typed
// (--token); only --help prints the whole help.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	}
	return usageError{fmt.Sprintf("%s; see `%s --help`", flagMessage(fs, err), fs.Name())}
}

var singleDash = regexp.MustCompile(`(^|[ :])-([A-Za-z][\w-]+)`)

// dashDash writes the flag package's -name as --name, as Herald's help
// and the user do (a one-letter flag keeps its one dash: -n).
func dashDash(msg string) string { return singleDash.ReplaceAllString(msg, "$1--$2") }

// placeholders name a flag's value in the help where its type would say
// only "string" (the transports' own flags: see placeholder).
var placeholders = map[string]string{
	"source": "KIND:URL", "username": "NAME",
	"control": "PATH", "db": "PATH", "ca-file": "PATH", "session": "ID", "run": "ID", "start": "TEXT", "follow": "ask|auto",
}

// placeholder names a flag's value in the help: a transport's flag
// (source.Driver.Flag) takes a URL, a sign-in's flag its secret, named by
// the secret's last word ("API key": KEY), and its -file flag a PATH.
func placeholder(flag string) (string, bool) {
	if p, ok := placeholders[flag]; ok {
		return p, true
	}
	for _, d := range source.Drivers() {
		if d.Flag != "" && d.Flag == flag {
			return "URL", true
		}
		for _, m := range d.Auth {
			switch {
			case m.Flag == "":
			case flag == m.Flag && m.Secret != "":
				words := strings.Fields(m.Secret)
				return strings.ToUpper(words[len(words)-1]), true
			case flag == m.Flag+"-file":
				return "PATH", true
			}
		}
	}
	return "", false
}

// printFlags lists fs's flags as "--name VALUE" with their use below.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		switch name {
		case "string", "value":
			name = "VALUE"
		case "int":
			name = "N"
		default:
			name = strings.ToUpper(name)
		}
		line := "  --" + f.Name
		if len(f.Name) == 1 {
			line = "  -" + f.Name
		}
		if p, ok := placeholder(f.Name); ok && name != "" {
			name = p
		}
		if name != "" {
			line += " " + name
		}
		switch f.DefValue {
		case "", "false", "0", "[]":
		default:
			if !strings.Contains(usage, "default") {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		fmt.Fprintf(w, "%s\n        %s\n", line, strings.ReplaceAll(usage, "\n", "\n        "))
	})
}

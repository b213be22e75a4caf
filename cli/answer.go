package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
)

func init() { commands["answer"] = cmdAnswer }

// cmdAnswer answers a clarify, sudo or secret prompt:
//
//	herald answer ID [TEXT | N]   clarify: free text, or choice number N
//	herald answer ID --text TEXT  clarify: TEXT as typed, even a number
//	herald answer ID              sudo/secret: typed with echo off
//	herald answer ID --stdin      sudo/secret: one line from a pipe
//	herald answer ID --decline    go on without an answer
//
// A password or secret is never taken from the command line: it would
// land in the shell history and in every process listing.
func cmdAnswer(e *env, args []string) error {
	fs := newFlags("answer", e)
	ctl := controlFlag(fs)
	decline := fs.Bool("decline", false, "decline the question (Hermes goes on without the answer)")
	fromStdin := fs.Bool("stdin", false, "read a password or secret from standard input (one line, for scripts) instead of the terminal")
	asText := fs.Bool("text", false, "send a question's answer as typed, even when it is a number")
	// Flags may come before or after the id and text.
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
	id, rest := "", []string(nil)
	if len(pos) > 0 {
		id, rest = pos[0], pos[1:]
	}
	if id == "" {
		return usageError{"usage: herald answer ID [TEXT | CHOICE-NUMBER] [--text] [--decline] [--stdin]; `herald pending` lists the ids"}
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "pending"})
	cancel()
	if err != nil {
		return err
	}
	r, err := findPending(resp.Pending, id)
	if err != nil {
		return err
	}
	var value []byte
	switch {
	case !r.Kind.IsPrompt():
		return usageError{fmt.Sprintf("%s is a command approval: answer it with `herald approve %s once|session|always|deny`", id, id)}
	case *decline:
		if len(rest) > 0 {
			return usageError{"--decline takes no answer"}
		}
	case r.Kind.Masked():
		if len(rest) > 0 {
			return usageError{"never put a password or secret on the command line (it lands in your shell history and in process listings); run `herald answer " + id + "` and type it, or pipe it with --stdin"}
		}
		fmt.Fprintln(e.stderr, promptHeader(r))
		if value, err = readMasked(e, r, *fromStdin); err != nil {
			return err
		}
		if len(value) == 0 {
			return errors.New("nothing was typed, so nothing was sent; use --decline to go on without an answer")
		}
	default:
		text := strings.Join(rest, " ")
		if text == "" {
			fmt.Fprintln(e.stderr, promptHeader(r))
			fmt.Fprint(e.stderr, "Answer (a choice number or your own text): ")
			line, err := readLine(e)
			switch {
			case e.ctx.Err() != nil:
				fmt.Fprintln(e.stderr) // end the prompt's line
				return errors.New("interrupted, nothing was sent")
			case err != nil && line == "":
				return errors.New("no answer was typed, so nothing was sent")
			}
			text = strings.TrimSpace(line)
		}
		if text == "" {
			return errors.New("the answer is empty, so nothing was sent; use --decline to go on without an answer")
		}
		if !*asText {
			if text, err = clarifyText(r, text); err != nil {
				return err
			}
		}
		value = []byte(text)
	}
	actx, cancel := context.WithTimeout(e.ctx, 40*time.Second)
	defer cancel()
	res, err := service.Control(actx, *ctl, service.ControlRequest{Op: "answer", Key: r.Key, Value: value, Surface: "cli"})
	clear(value)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, answeredLine(*res.Request))
	return nil
}

// answeredLine confirms an answer the gateway took. A clarify choice is
// the gateway's own text, so it is shown as approval.VisibleLine.
func answeredLine(r approval.Request) string {
	return fmt.Sprintf("%s: %s, taken by the gateway", service.ShortKey(r.Key), approval.VisibleLine(r.Outcome.Choice))
}

// findPending finds the waiting request id names (a short id or a key, or
// a unique prefix of either).
func findPending(pend []approval.Request, id string) (approval.Request, error) {
	var hits []approval.Request
	for _, r := range pend {
		if strings.HasPrefix(service.ShortKey(r.Key), id) || strings.HasPrefix(r.Key, id) {
			hits = append(hits, r)
		}
	}
	switch len(hits) {
	case 0:
		return approval.Request{}, fmt.Errorf("nothing with id %q is waiting: run `herald pending` to list what is", id)
	case 1:
		return hits[0], nil
	}
	return approval.Request{}, fmt.Errorf("id %q is ambiguous (%d match): give more of it", id, len(hits))
}

// clarifyText maps a choice number to its choice; other text is sent as
// typed. A number that is no choice of a question that lists choices is
// refused rather than sent as the answer: the user meant a choice
// (--text sends it as typed).
func clarifyText(r approval.Request, text string) (string, error) {
	n, err := strconv.Atoi(text)
	if err != nil || len(r.Choices) == 0 {
		return text, nil
	}
	if n >= 1 && n <= len(r.Choices) {
		return r.Choices[n-1], nil
	}
	return "", usageError{fmt.Sprintf("there is no choice %s (choose 1 to %d); nothing was sent. To send %q as your own answer, add --text", text, len(r.Choices), text)}
}

// readMasked reads a password or secret with echo off from the terminal,
// or one line from standard input with --stdin.
func readMasked(e *env, r approval.Request, fromStdin bool) ([]byte, error) {
	what := "Password"
	if r.Kind == approval.KindSecret {
		what = "Value of " + approval.VisibleLine(r.EnvVar)
	}
	if fromStdin {
		line, err := bufio.NewReader(io.LimitReader(e.stdin, approval.MaxAnswerBytes+2)).ReadBytes('\n')
		if err != nil && len(line) == 0 {
			return nil, errors.New("nothing could be read from standard input, so nothing was sent")
		}
		for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
			line = line[:len(line)-1]
		}
		return line, nil
	}
	f, ok := e.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, errors.New("a password or secret is read from a terminal with echo off; run this in a terminal, or pipe the value with --stdin")
	}
	fmt.Fprintf(e.stderr, "%s (not shown): ", what)
	fd := int(f.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return nil, errors.New("reading from the terminal failed, so nothing was sent")
	}
	b, err := readUntilDone(e.ctx, func() ([]byte, error) { return term.ReadPassword(fd) }, func() { term.Restore(fd, saved) })
	fmt.Fprintln(e.stderr)
	if errors.Is(err, context.Canceled) {
		return nil, errors.New("interrupted, nothing was sent")
	}
	if err != nil {
		return nil, errors.New("reading from the terminal failed, so nothing was sent")
	}
	return b, nil
}

// readUntilDone runs read (a password read with echo off) until it returns
// or ctx ends (Ctrl-C: Herald catches the signal, so the read would go on
// and take the next line typed). Then it restores the terminal, echo
// included, and returns ctx's error; the abandoned read ends with the
// process.
func readUntilDone(ctx context.Context, read func() ([]byte, error), restore func()) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		b, err := read()
		got <- result{b, err}
	}()
	select {
	case r := <-got:
		return r.b, r.err
	case <-ctx.Done():
		restore()
		return nil, ctx.Err()
	}
}

// readLine reads one line typed at a prompt, or returns when Ctrl-C ends
// e.ctx (Herald catches the signal, so the read alone would wait on).
func readLine(e *env) (string, error) {
	b, err := readUntilDone(e.ctx, func() ([]byte, error) {
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		return []byte(line), err
	}, func() {})
	return string(b), err
}

// promptHeader says who asks what, on one or a few lines.
func promptHeader(r approval.Request) string {
	who := fmt.Sprintf("%s / %s", approval.VisibleLine(r.Gateway), sessionOf(r))
	switch r.Kind {
	case approval.KindSudo:
		s := "Gateway " + who + " asks for the sudo password of the machine Hermes runs on"
		if r.Command != "" {
			s += ", to run: " + approval.VisibleCommandLine(r.Command)
		}
		return s
	case approval.KindSecret:
		return fmt.Sprintf("Gateway %s asks for a secret, stored there as %s: %s", who, approval.VisibleLine(r.EnvVar), approval.VisibleLine(r.Prompt))
	}
	s := fmt.Sprintf("Gateway %s asks: %s", who, approval.VisibleLine(r.Question))
	for i, c := range r.Choices {
		s += fmt.Sprintf("\n  %d. %s", i+1, approval.VisibleLine(c))
	}
	return s
}

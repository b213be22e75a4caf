package cli

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// printPrompt shows a clarify, sudo or secret prompt and what became of it
// in `herald watch`. A password or secret is never shown (it is never in
// the inbox to begin with).
func printPrompt(out *printer, id string, c approval.Change) {
	r := c.Request
	switch {
	case c.Kind == approval.ChangeArrived && r.State == approval.StateFailed:
		out.line("! %s %s prompt from %s cannot be answered from Herald: %s", id, r.Kind, approval.VisibleLine(r.Gateway), approval.VisibleLine(r.Outcome.Error))
	case c.Kind == approval.ChangeArrived:
		out.line("")
		out.line("┏ %s %s  %s / %s", strings.ToUpper(string(r.Kind)), id, approval.VisibleLine(r.Gateway), sessionOf(r))
		switch r.Kind {
		case approval.KindClarify:
			out.line("┃ %s", approval.VisibleLine(r.Question))
			for _, l := range strings.Split(promptHeader(r), "\n")[1:] {
				out.line("┃%s", l)
			}
			out.line("┗ type a choice number or `t YOUR ANSWER` (add the id after the number to pick another question); expires %s", r.ExpiresAt.Local().Format("15:04:05"))
		case approval.KindSudo:
			if r.Command != "" {
				out.line("┃ for: %s", approval.VisibleCommandLine(r.Command))
			}
			out.line("┗ the sudo password of the machine Hermes runs on: answer with `herald answer %s` in another terminal (typed with echo off) or in the window; expires %s", id, r.ExpiresAt.Local().Format("15:04:05"))
		case approval.KindSecret:
			out.line("┃ %s (stored as %s)", approval.VisibleLine(r.Prompt), approval.VisibleLine(r.EnvVar))
			out.line("┗ answer with `herald answer %s` in another terminal (typed with echo off) or in the window; expires %s", id, r.ExpiresAt.Local().Format("15:04:05"))
		}
	case c.Kind == approval.ChangeUpdated:
		switch r.State {
		case approval.StateResolved:
			out.line("  %s %s: taken by the gateway (from %s)", id, approval.VisibleLine(r.Outcome.Choice), r.Outcome.Surface)
		case approval.StateExpired:
			out.line("  %s timed out: the agent went on without an answer", id)
		case approval.StateCancelled:
			out.line("  %s withdrawn (%s)", id, approval.VisibleLine(firstNonEmpty(string(r.Outcome.Reason), r.Outcome.Detail)))
		case approval.StatePending:
			if r.LastError != "" {
				out.line("  %s not sent: %s", id, approval.VisibleLine(r.LastError))
			}
		}
	}
}

// textAnswerer answers a question with text (service.Service does).
type textAnswerer interface {
	AnswerText(ctx context.Context, id string, value *wire.Secret, surface string) error
}

// AnswerText answers a question with text through the service.
func (i svcInbox) AnswerText(ctx context.Context, id string, value *wire.Secret, surface string) error {
	return i.s.AnswerText(ctx, id, value, surface)
}

// handlePrompt answers a clarify question from a line typed in watch:
// "N [ID]" picks choice N, "t TEXT" (or "> TEXT") sends free text. With
// several questions waiting it never guesses: the id is needed.
// It reports whether the line was for a question.
func (k *keys) handlePrompt(ctx context.Context, l string) bool {
	fields := strings.Fields(l)
	var text, id string
	n, err := strconv.Atoi(fields[0])
	switch {
	case err == nil:
		if len(fields) > 1 {
			id = fields[1]
		}
	case fields[0] == "t" || fields[0] == ">":
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), fields[0]))
		if text == "" {
			k.out.line("Type `t YOUR ANSWER` to answer the question.")
			return true
		}
	case strings.HasPrefix(fields[0], ">"):
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), ">"))
	default:
		return false
	}
	var hits []approval.Request
	for _, r := range k.in.Pending() {
		if r.Kind == approval.KindClarify && r.State == approval.StatePending && (id == "" || strings.HasPrefix(service.ShortKey(r.Key), id)) {
			hits = append(hits, r)
		}
	}
	switch {
	case len(hits) == 0:
		k.out.line("No question is waiting.")
		return true
	case len(hits) > 1:
		// Never guess which question the user means.
		first := service.ShortKey(hits[0].Key)
		k.out.line("Not sent: %d questions are waiting, so say which one: a choice with its id (\"1 %s\"), or your own words with `herald answer %s TEXT`:", len(hits), first, first)
		for _, r := range hits {
			k.out.line("  %s", promptPendingLine(r, k.now()))
		}
		return true
	}
	target := hits[0]
	short := service.ShortKey(target.Key)
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if text == "" {
		if n < 1 || n > len(target.Choices) {
			k.out.line("! %s: there is no choice %d; type `t YOUR ANSWER` to answer in your own words", short, n)
			return true
		}
		if err := k.in.Answer(actx, short, target.Choices[n-1], "terminal", approval.Confirmed{}); err != nil {
			k.out.line("! %s: %s", short, approval.VisibleLine(err.Error()))
		}
		return true
	}
	ta, ok := k.in.(textAnswerer)
	if !ok {
		k.out.line("! %s: this terminal cannot send text answers; use `herald answer %s`", short, short)
		return true
	}
	if err := ta.AnswerText(actx, target.Key, wire.NewSecret([]byte(text)), "terminal"); err != nil {
		k.out.line("! %s: %s", short, approval.VisibleLine(err.Error()))
	}
	return true
}

// approvalsOnly keeps the command approvals (the o/s/a/d keys' targets).
func approvalsOnly(rs []approval.Request) []approval.Request {
	var out []approval.Request
	for _, r := range rs {
		if !r.Kind.IsPrompt() {
			out = append(out, r)
		}
	}
	return out
}

// promptPendingLine is a prompt's line in `herald pending`.
func promptPendingLine(r approval.Request, now time.Time) string {
	what := ""
	switch r.Kind {
	case approval.KindClarify:
		what = approval.VisibleLine(r.Question)
		if len(r.Choices) > 0 {
			what += "  [" + approval.VisibleLine(strings.Join(r.Choices, " | ")) + "]"
		}
	case approval.KindSudo:
		what = "sudo password"
		if r.Command != "" {
			what += " for " + approval.VisibleCommandLine(r.Command)
		}
	case approval.KindSecret:
		what = "secret " + approval.VisibleLine(r.EnvVar) + ": " + approval.VisibleLine(r.Prompt)
	}
	return service.ShortKey(r.Key) + "  " + approval.VisibleLine(r.Gateway) + "  " + sessionOf(r) + "  " + string(r.Kind) + ": " + what +
		"  (herald answer " + service.ShortKey(r.Key) + ") expires in " + r.ExpiresAt.Sub(now).Round(time.Second).String()
}

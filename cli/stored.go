package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/service"
)

// cmdSessions lists an API server's stored sessions: those a prompt can
// continue (`herald ask --session ID`), by name, the most recently
// active first.
func cmdSessions(e *env, args []string) error {
	fs := newFlags("sessions", e)
	ctl := controlFlag(fs)
	d := addDirectFlags(fs, "the API server: a name the running Herald knows, or a URL to talk to directly")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"usage: herald sessions [--gateway NAME | --api URL]"}
	}
	ctx, cancel := context.WithTimeout(e.ctx, 45*time.Second)
	defer cancel()
	out := &printer{w: e.stdout, json: *asJSON}
	var v service.StoredSessionsView
	if d.direct() {
		svc, name, stop, err := d.connect(ctx, e, out, nil)
		if err != nil {
			return err
		}
		defer stop()
		if v, err = svc.StoredSessions(ctx, name); err != nil {
			return err
		}
	} else {
		resp, err := service.Control(ctx, *ctl, service.ControlRequest{Op: "sessions", Gateway: d.name()})
		if err != nil {
			return fmt.Errorf("%v, or give --api URL to list them directly", err)
		}
		v = *resp.Stored
	}
	if *asJSON {
		return writeJSON(e.stdout, v)
	}
	printStored(out, v)
	return nil
}

// printStored says a listing for the terminal: one line per session, its
// name first, then what to type to continue it.
func printStored(out *printer, v service.StoredSessionsView) {
	gw := approval.VisibleLine(v.Gateway)
	if len(v.Sessions) == 0 {
		out.line("%s has no stored sessions yet.", gw)
	}
	for i, s := range v.Sessions {
		if i == 0 {
			out.line("%s, the most recently active first (continue one with `herald ask --session ID TEXT`):", gw)
		}
		when := ""
		if !s.LastActive.IsZero() {
			when = ", last active " + s.LastActive.Local().Format("2006-01-02 15:04")
		}
		turn := ""
		if s.Turn != "" {
			turn = ", Herald's turn " + approval.VisibleLine(s.Turn) + " running"
		}
		out.line("  %s  (%d messages%s%s)  id %s", approval.VisibleLine(s.Name), s.MessageCount, when, turn, approval.VisibleLine(s.ID))
	}
	if v.More {
		out.line("  … and more: only the most recent %d are listed", len(v.Sessions))
	}
	if v.Note != "" {
		out.line("note: %s", approval.VisibleLine(v.Note))
	}
}

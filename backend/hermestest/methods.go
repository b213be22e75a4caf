package hermestest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// onlyKeys mirrors newer Hermes contracts (extra="forbid"): an unknown
// parameter is error 4000.
func onlyKeys(p map[string]any, allowed ...string) *rpcErr {
	for k := range p {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			return &rpcErr{4000, "invalid params: unexpected field " + k}
		}
	}
	return nil
}

// is019 is the 0.19.0 release of the Legacy dialect.
func (s *Server) is019() bool { return s.opts.Dialect == Legacy && s.opts.Version == "0.19.0" }

func (s *Server) desktopContract() int {
	if s.is019() {
		return 4
	}
	return 3
}

// usage is the token count the real gateways put in session.info and
// message.complete (the stub agent counts turns as calls).
func (s *Server) usage(fs *fsession) map[string]any {
	calls := len(fs.history) / 2
	return map[string]any{"model": "hermes-stub", "input": 5 * calls, "output": 18 * calls, "reasoning": 0,
		"prompt": 5 * calls, "completion": 18 * calls, "total": 23 * calls, "calls": calls, "active_subagents": 0}
}

func (s *Server) info(fs *fsession) map[string]any {
	return map[string]any{
		"model": "hermes-stub", "provider": "stub", "approval_mode": "manual", "yolo": false,
		"running": fs.running, "title": fs.title, "cwd": "/srv/workspace", "version": s.version(),
		"tools": map[string]any{"terminal": []string{"terminal"}}, "desktop_contract": s.desktopContract(),
		"usage": s.usage(fs),
	}
}

// callLocked serves one client method. A nil result with a nil error means
// "no response" (never used by Hermes, which answers even notifications).
func (s *Server) callLocked(c *fconn, method string, raw json.RawMessage) (any, *rpcErr) {
	var p map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, &rpcErr{-32602, "invalid params"}
		}
	}
	str := func(k string) string { v, _ := p[k].(string); return v }
	d := s.opts.Dialect
	modern := d.serverRequests()
	notFound := &rpcErr{-32601, "unknown method: " + method}

	switch method {
	case "session.create":
		if n := s.opts.ActiveSessionLimit; n > 0 && len(s.sessions) >= n {
			return nil, &rpcErr{4090, fmt.Sprintf("at the active session limit (%d/%d); close a session first", len(s.sessions), n)}
		}
		fs := s.newSessionLocked("")
		s.attachLocked(fs, c)
		fs.closeOnDisconnect, _ = p["close_on_disconnect"].(bool)
		s.notifyLocked()
		// session.info follows the create result, as in Hermes.
		defer s.emitLocked(fs, "session.info", s.info(fs))
		return map[string]any{
			"session_id": fs.live, "stored_session_id": fs.stored,
			"message_count": 0, "messages": []any{}, "info": s.info(fs),
		}, nil

	case "session.resume":
		stored := str("session_id")
		fs := s.stored[stored]
		if fs == nil || !fs.hasRow {
			// Hermes writes the session row at the first prompt.
			return nil, &rpcErr{4007, "session not found"}
		}
		if fs.cold {
			// Cold path: a new runtime id with history from the store.
			nfs := &fsession{live: newID(8), stored: stored, history: fs.history, hasRow: true}
			s.sessions[nfs.live] = nfs
			s.stored[stored] = nfs
			fs = nfs
		}
		// Single consumer: the session's live events now go to this
		// connection only; the previous consumer is not told. Fan-out:
		// this connection is one more receiver.
		s.attachLocked(fs, c)
		s.notifyLocked()
		res := map[string]any{
			"session_id": fs.live, "resumed": stored, "message_count": len(fs.history),
			"messages": fs.history, "info": s.info(fs), "running": fs.running,
			"session_key": fs.stored, "status": s.liveStatusLocked(fs),
			"started_at": float64(fs.created.UnixNano()) / 1e9,
		}
		if fs.running {
			res["inflight"] = map[string]any{"assistant": fs.inflight, "streaming": true, "user": fs.userText}
		}
		if modern {
			res["open_requests"] = s.openRequestsLocked(fs)
		}
		if d.sequenced() {
			res["latest_seq"] = fs.seq
		}
		return res, nil

	case "session.activate":
		if !d.sequenced() {
			return nil, notFound
		}
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		s.attachLocked(fs, c)
		res := map[string]any{"running": fs.running}
		if modern {
			res["open_requests"] = s.openRequestsLocked(fs)
		}
		return res, nil

	case "session.events.since":
		if !d.sequenced() {
			return nil, notFound
		}
		if e := onlyKeys(p, "session_id", "last_seen"); e != nil {
			return nil, e
		}
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		last := uint64(0)
		if f, ok := p["last_seen"].(float64); ok && f > 0 {
			last = uint64(f)
		}
		events := []any{}
		for _, e := range fs.ring {
			if e.seq > last {
				events = append(events, e.params)
			}
		}
		res := map[string]any{
			"events": events, "latest_seq": fs.seq, "epoch": s.epoch, "count": len(events),
			"truncated": last < fs.evictedThrough || last > fs.seq,
		}
		if modern {
			res["open_requests"] = s.openRequestsLocked(fs)
		}
		return res, nil

	case "gateway.ping":
		if !modern {
			return nil, notFound
		}
		return map[string]any{"ok": true}, nil

	case "client.capabilities":
		if !modern {
			return nil, notFound
		}
		if e := onlyKeys(p, "server_requests"); e != nil {
			return nil, e
		}
		c.serverRequests, _ = p["server_requests"].(bool)
		return map[string]any{"server_requests": []string{"approval", "clarify", "secret", "sudo"}, "declines_not_shown": true}, nil

	case "prompt.submit":
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		if s.opts.ExclusiveSubmit && fs.transport != nil && fs.transport != c && !fs.transport.dead {
			return nil, &rpcErr{4090, "Session " + fs.live + " already has a live owner (another client). Only one surface at a time may run a session."}
		}
		s.attachLocked(fs, c) // a submit re-binds the session's transport (fan-out: adds)
		fs.hasRow = true
		s.notifyLocked()
		if fs.running {
			// display.busy_input_mode "interrupt" (Hermes' default): the
			// running turn is interrupted and the new text runs next
			// (capture 10_protocol_probe, "busy submit").
			fs.queued = str("text")
			if fs.intr != nil {
				close(fs.intr)
				fs.intr = nil
			}
			return map[string]any{"status": "queued"}, nil
		}
		s.startTurnLocked(fs, str("text"))
		return map[string]any{"status": "streaming"}, nil

	case "session.interrupt":
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		// Hermes: the agent is interrupted, every pending approval of
		// the session is resolved "deny" (resolve_gateway_approval(...,
		// "deny", resolve_all=True)) and the call answers at once; the
		// turn then ends with message.complete status "interrupted". An
		// idle session answers the same and nothing follows.
		if fs.intr != nil {
			close(fs.intr)
			fs.intr = nil
		}
		for _, a := range append([]*fapproval(nil), fs.pending...) {
			s.removePendingLocked(fs, a)
			a.finish("deny")
			s.cancelLocked(fs, a, "interrupted")
		}
		s.interrupts++
		s.interruptPromptsLocked(fs)
		s.notifyLocked()
		return map[string]any{"status": "interrupted"}, nil

	case "approval.respond":
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		choice := str("choice")
		if !validChoice(choice) {
			return nil, &rpcErr{-32602, "invalid choice: " + choice}
		}
		var targets []*fapproval
		rid := str("request_id") // the approval-queue id
		all, _ := p["all"].(bool)
		for _, a := range fs.pending {
			if (rid == "" || rid == a.queueID) && (all || len(targets) == 0) {
				targets = append(targets, a)
			}
		}
		if len(targets) == 0 {
			s.answers = append(s.answers, Answer{Session: fs.live, RequestID: rid, Choice: choice, Via: method})
			s.notifyLocked()
			return s.respondResultLocked(0), nil
		}
		for _, a := range targets {
			s.resolveLocked(fs, a, choice, method, true)
		}
		return s.respondResultLocked(len(targets)), nil

	case "session.history":
		// Read-only, no attach (tui_gateway/server.py session.history:
		// _sess_nowait, then the stored conversation as {role, text}; the
		// user's prompt is stored when its turn starts).
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		msgs := []any{}
		for _, m := range fs.history {
			msgs = append(msgs, map[string]any{"role": m["role"], "text": m["text"]})
		}
		if fs.running && fs.userText != "" {
			msgs = append(msgs, map[string]any{"role": "user", "text": fs.userText})
		}
		return map[string]any{"count": len(msgs), "messages": msgs}, nil

	case "session.status":
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		running := "No"
		if fs.running {
			running = "Yes"
		}
		return map[string]any{"output": "Hermes TUI Status\n\nSession ID: " + fs.stored + "\nAgent Running: " + running}, nil

	case "approval.pending":
		if !d.answersWithoutAttaching() {
			return nil, notFound
		}
		fs := s.sessions[str("session_id")]
		if fs == nil {
			return nil, &rpcErr{4001, "session not found"}
		}
		list := []any{}
		for _, a := range fs.pending {
			p := a.params()
			p["request_id"] = a.queueID
			p["id"] = a.id
			list = append(list, p)
		}
		return map[string]any{"approvals": list}, nil

	case "request.answer":
		if !d.answersWithoutAttaching() {
			return nil, notFound
		}
		id := str("id")
		result, ok := p["result"].(map[string]any)
		if id == "" || !ok {
			return nil, &rpcErr{4002, "id and result required"}
		}
		raw, _ := json.Marshal(id)
		res, _ := json.Marshal(result)
		if !s.answerRequestLocked(c, rpcFrame{ID: raw, Result: res}, "request.answer") {
			return map[string]any{"status": "expired"}, nil
		}
		return map[string]any{"status": "ok"}, nil

	case "session.active_list":
		// Every live session of this process, in creation order. Nothing
		// in a row says which client (if any) receives its events.
		all := make([]*fsession, 0, len(s.sessions))
		for _, fs := range s.sessions {
			all = append(all, fs)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].n < all[j].n })
		list := []any{}
		for _, fs := range all {
			list = append(list, s.activeItemLocked(fs, str("current_session_id")))
		}
		return map[string]any{"sessions": list}, nil
	}
	if res, e, ok := s.promptMethodLocked(method, p); ok {
		return res, e
	}
	return nil, notFound
}

// startTurnLocked starts a turn of the scripted agent.
func (s *Server) startTurnLocked(fs *fsession, text string) {
	fs.running, fs.hasRow = true, true
	fs.userText = text
	fs.stop = make(chan struct{})
	fs.intr = make(chan struct{})
	fs.release = make(chan struct{})
	// Both real releases say running first (capture 01_approve_once).
	s.emitLocked(fs, "session.info", s.info(fs))
	s.emitLocked(fs, "message.start", nil)
	go s.runAgent(fs, text, fs.stop, fs.intr, fs.release)
}

// runAgent is the scripted stub agent. Prompts:
//
//	approve-me: CMD   ask approval for CMD, then "run" it or report it blocked
//	approve-seq: C1 || C2
//	                  as approve-me for each command, one after the other
//	approve-par: C1 || C2
//	                  ask every command's approval at once (two waiting in
//	                  one session, the first asked first), and report each
//	                  as it is answered; with Options.SwapParallel (event
//	                  form), announced in the reverse order
//	burst N           stream N message.delta events
//	hold              stream one delta ("holding "), then wait until
//	                  interrupted or Server.Release
//	clarify: Q        ask Q (choices yes/no) and report the answer
//	sudo: CMD         ask for a sudo password; secret: ENV asks for a value
//	anything else     answer "stub answer: TEXT"
//
// stop kills the agent silently (restart, close); intr is session.interrupt:
// the turn ends with message.complete status "interrupted", as in Hermes.
func (s *Server) runAgent(fs *fsession, text string, stop, intr, release chan struct{}) {
	steps := 0
	killed := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	interrupted := func() bool {
		select {
		case <-intr:
			return true
		default:
			return false
		}
	}
	// step paces and emits one frame; false when the turn must end here
	// (killed or interrupted).
	step := func(fn func()) bool {
		if s.opts.StepDelay > 0 {
			select {
			case <-time.After(s.opts.StepDelay):
			case <-stop:
				return false
			case <-intr:
				return false
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if killed() || interrupted() {
			return false
		}
		fn()
		steps++
		return true
	}
	// ask runs the terminal tool for each of cmds at once, each asking its
	// approval (tool.start, approval.request, in order), and reports each
	// outcome with its tool.complete as soon as it is answered: "approved:
	// CMD" or "blocked: CMD" per command, in the order of cmds; ok is
	// false when the turn ended first.
	ask := func(cmds []string) (lines []string, ok bool) {
		for _, w := range []string{"I ", "will ", "run ", "a ", "command."} {
			if !step(func() { s.emitLocked(fs, "message.delta", map[string]any{"text": w}) }) {
				return nil, false
			}
		}
		s.mu.Lock()
		if killed() || interrupted() {
			s.mu.Unlock()
			return nil, false
		}
		toolIDs, asked := make([]string, len(cmds)), make([]*fapproval, len(cmds))
		swap := s.opts.SwapParallel && len(cmds) > 1 && !s.opts.Dialect.serverRequests()
		for i, cmd := range cmds {
			s.nextTool++
			toolIDs[i] = fmt.Sprintf("call_%012d", s.nextTool)
			s.emitLocked(fs, "tool.start", map[string]any{"tool_id": toolIDs[i], "name": "terminal", "context": "Running " + cmd})
			asked[i] = s.requestApprovalLocked(fs, ApprovalSpec{Command: cmd, held: swap})
		}
		if swap {
			// Queued in order, announced in the other (PROTOCOL.md,
			// "Two approvals in one turn").
			for i := len(asked) - 1; i >= 0; i-- {
				s.announceLocked(fs, asked[i])
			}
		}
		s.mu.Unlock()
		lines, ok = make([]string, len(cmds)), true
		var wg sync.WaitGroup
		for i, cmd := range cmds {
			wg.Go(func() {
				var choice string
				select {
				case choice = <-asked[i].done:
				case <-stop:
					return
				}
				approved := choice == "once" || choice == "session" || choice == "always"
				result := map[string]any{"output": "[stub] would have run: " + cmd, "exit_code": 0}
				lines[i] = "approved: " + cmd
				if !approved {
					why := "Command denied by user."
					if choice == "" {
						why = "Command timed out without user response."
					}
					result = map[string]any{"output": "", "exit_code": -1, "error": "BLOCKED: " + why + " The user has NOT consented to this action."}
					lines[i] = "blocked: " + cmd
				}
				// The tool reports its outcome even when an interrupt
				// denied the approval (capture 08_interrupt_pending_approval).
				s.mu.Lock()
				defer s.mu.Unlock()
				if !killed() {
					s.emitLocked(fs, "tool.complete", map[string]any{"tool_id": toolIDs[i], "name": "terminal", "args": map[string]any{"command": cmd}, "duration_s": 0.01, "result": result})
				}
			})
		}
		wg.Wait()
		return lines, !killed()
	}
	reply := func() string {
		switch {
		case strings.HasPrefix(text, "approve-me:"):
			lines, _ := ask([]string{strings.TrimSpace(strings.TrimPrefix(text, "approve-me:"))})
			return strings.Join(lines, "\n")
		case strings.HasPrefix(text, "approve-seq:"):
			var out []string
			for _, cmd := range commands(strings.TrimPrefix(text, "approve-seq:")) {
				lines, ok := ask([]string{cmd})
				if !ok {
					return ""
				}
				out = append(out, lines...)
			}
			return strings.Join(out, "\n")
		case strings.HasPrefix(text, "approve-par:"):
			lines, _ := ask(commands(strings.TrimPrefix(text, "approve-par:")))
			return strings.Join(lines, "\n")
		case strings.HasPrefix(text, "burst "):
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(text, "burst ")))
			for i := 1; i <= n; i++ {
				if !step(func() { s.emitLocked(fs, "message.delta", map[string]any{"text": fmt.Sprintf("tick %d/%d ", i, n)}) }) {
					return ""
				}
			}
			return fmt.Sprintf("burst of %d done", n)
		case strings.TrimSpace(text) == "hold":
			if !step(func() { s.emitLocked(fs, "message.delta", map[string]any{"text": "holding "}) }) {
				return ""
			}
			select {
			case <-stop:
			case <-intr:
			case <-release:
				return "held turn done"
			}
			return ""
		}
		if r, ok := s.promptScript(fs, text, stop); ok {
			return r
		}
		return "stub answer: " + text
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	if killed() {
		return
	}
	status := "complete"
	if interrupted() {
		status = "interrupted"
		if reply == "" {
			reply = fmt.Sprintf("interrupted after %d steps", steps)
		}
	}
	fs.history = append(fs.history, map[string]string{"role": "user", "text": text}, map[string]string{"role": "assistant", "text": reply})
	s.emitLocked(fs, "message.complete", map[string]any{"text": reply, "status": status, "usage": s.usage(fs)})
	if s.is019() {
		// 0.19.0 marks the session idle a moment after message.complete;
		// a prompt.submit in between is queued (it interrupts nothing).
		t := s.clk.NewTimer(s.settle())
		s.mu.Unlock()
		select {
		case <-t.C():
		case <-stop:
		}
		t.Stop()
		s.mu.Lock()
		if killed() {
			return
		}
	}
	fs.running = false
	fs.stop, fs.intr, fs.release = nil, nil, nil
	s.emitLocked(fs, "session.info", s.info(fs))
	if next := fs.queued; next != "" {
		fs.queued = ""
		s.startTurnLocked(fs, next)
	}
	s.notifyLocked()
}

func (s *Server) settle() time.Duration {
	if s.opts.Settle > 0 {
		return s.opts.Settle
	}
	return 200 * time.Millisecond
}

// commands splits an approve-seq or approve-par task ("C1 || C2") into its
// commands, as the stub agent does.
func commands(task string) []string {
	var out []string
	for _, c := range strings.Split(task, "||") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// respondResultLocked is approval.respond's result once the gateway acted:
// {"resolved": n}, a bool where Options.ResolvedAsBool, or the reply of
// Faults.RespondReply.
func (s *Server) respondResultLocked(n int) any {
	if s.faults.RespondReply != nil {
		return s.faults.RespondReply
	}
	if s.opts.ResolvedAsBool {
		return map[string]any{"resolved": n > 0}
	}
	return map[string]any{"resolved": n}
}

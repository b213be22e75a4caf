package apiservertest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// fevent is one event in a run's log.
type fevent struct {
	seq  int
	name string // the "event:" name (session chat streams)
	body []byte
}

// frun is one run on the fake.
type frun struct {
	id, input, session, model string
	created, updated          float64
	status, lastEvent         string
	output, errMsg            string
	usage                     obj
	approvalEvent             obj // the pending approval (LastEventID status)

	log         []fevent
	cursor      int // SingleConsumer: the one shared read position
	subscribers int
	gone        bool // SingleConsumer: the stream was forgotten
	finished    bool // the stream's end sentinel was queued
	emitted     int
	notify      chan struct{}

	pending        []*fapproval
	approvalActive bool
	nextRequest    int
	stopCh         chan struct{}
	stopped        bool

	// turn is the session of a session chat stream's turn (nil for
	// /v1/runs runs), messageID its assistant message.
	turn      *fsession
	messageID string
	// stored is the stored session a /v1/runs run names in session_id
	// (nil when none is stored under it): the run's prompt and reply are
	// added to it, as the agent's SessionDB writes do on the real server.
	stored *fsession
	// history counts the conversation_history entries the start sent.
	history int
}

type fapproval struct {
	id, command, desc string
	answer            chan string
}

func (r *frun) stopAgent() {
	if !r.stopped {
		r.stopped = true
		close(r.stopCh)
	}
}

func (r *frun) terminal() bool {
	switch r.status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

func (s *Server) lookup(id string) *frun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupLocked(id)
}

// lookupLocked finds a run for the /v1/runs routes: a run, or a session
// turn where /v1/runs knows them (SessionStreamApprovals).
func (s *Server) lookupLocked(id string) *frun {
	if r := s.runs[id]; r != nil {
		return r
	}
	if s.turnControlled() {
		return s.turns[id]
	}
	return nil
}

func runNotFound(w http.ResponseWriter, id string) {
	writeError(w, http.StatusNotFound, "Run not found: "+id, "run_not_found")
}

// emitLocked queues a standard run event: event, run_id, timestamp, fields.
func (s *Server) emitLocked(r *frun, name string, fields obj) {
	o := obj{{"event", name}, {"run_id", r.id}, {"timestamp", s.now()}}
	s.pushLocked(r, name, append(o, fields...))
}

// pushLocked appends an event to the run's stream, as Hermes' run queue.
func (s *Server) pushLocked(r *frun, name string, o obj) {
	if name != "message.delta" {
		r.lastEvent = name // text deltas bypass the status update
	}
	r.updated = s.now()
	if r.turn != nil {
		s.pushTurnLocked(r, name, o)
		s.notifyLocked()
		return
	}
	if s.opts.Dialect == SingleConsumer && r.gone {
		s.notifyLocked() // no transport any more: the event is lost
		return
	}
	r.emitted++
	r.log = append(r.log, fevent{seq: len(r.log) + 1, body: pyJSON(o)})
	close(r.notify)
	r.notify = make(chan struct{})
	s.notifyLocked()
}

func (s *Server) setStatus(r *frun, status string) {
	s.mu.Lock()
	r.status = status
	r.updated = s.now()
	s.notifyLocked()
	s.mu.Unlock()
}

func (s *Server) statusObj(r *frun) obj {
	o := obj{
		{"object", "hermes.run"}, {"run_id", r.id}, {"status", r.status},
		{"updated_at", r.updated}, {"created_at", r.created},
		{"session_id", r.session}, {"model", r.model},
	}
	if r.lastEvent != "" {
		o = append(o, kv{"last_event", r.lastEvent})
	}
	if r.status == "completed" {
		o = append(o, kv{"output", r.output}, kv{"usage", r.usage})
	}
	if r.errMsg != "" {
		o = append(o, kv{"error", r.errMsg})
	}
	if (s.opts.Dialect == LastEventID || r.turn != nil) && r.status == "waiting_for_approval" && r.approvalEvent != nil {
		o = append(o, kv{"approval", r.approvalEvent})
	}
	return o
}

func (s *Server) serveStart(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(req.Body, 1<<20+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON", "")
		return
	}
	if len(raw) > 1<<20 {
		writeError(w, http.StatusRequestEntityTooLarge, "Request body too large.", "body_too_large")
		return
	}
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil || body == nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON", "")
		return
	}
	input := ""
	switch v := body["input"].(type) {
	case string:
		input = v
	case []any:
		if len(v) > 0 {
			if m, ok := v[len(v)-1].(map[string]any); ok {
				input, _ = m["content"].(string)
			}
		}
	}
	if body["input"] == nil || body["input"] == "" {
		writeError(w, http.StatusBadRequest, "Missing 'input' field", "")
		return
	}
	if input == "" {
		writeError(w, http.StatusBadRequest, "No user message found in input", "")
		return
	}
	history, msg := checkHistory(body["conversation_history"])
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg, "")
		return
	}
	key := strings.TrimSpace(req.Header.Get("Idempotency-Key"))
	fp, _ := json.Marshal(body) // map keys sort: a canonical fingerprint

	s.mu.Lock()
	for _, c := range key {
		if c < 33 || c > 126 {
			s.mu.Unlock()
			writeError(w, http.StatusBadRequest, "Idempotency-Key must be 1-255 visible ASCII characters", "invalid_idempotency_key")
			return
		}
	}
	if len(key) > 255 {
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "Idempotency-Key must be 1-255 visible ASCII characters", "invalid_idempotency_key")
		return
	}
	// Only the dialect that advertises idempotency honours the key on
	// /v1/runs: the real 0.18.2 and 0.19.0 _handle_runs never read it
	// (they cache only chat completions and responses by key).
	if e, ok := s.idem[key]; ok && key != "" && s.opts.Dialect == LastEventID {
		if e.fingerprint != string(fp) {
			s.mu.Unlock()
			writeError(w, http.StatusConflict, "Idempotency-Key was already used with a different request payload", "idempotency_key_conflict")
			return
		}
		r := s.runs[e.runID]
		o := obj{{"run_id", r.id}, {"status", r.status}}
		if s.opts.Dialect == LastEventID {
			w.Header().Set("Idempotency-Replayed", "true")
			o = append(o, kv{"replayed", true})
		}
		drop := s.faults.DropStartResponse > 0
		if drop {
			s.faults.DropStartResponse--
		}
		s.notifyLocked()
		s.mu.Unlock()
		if drop {
			panic(http.ErrAbortHandler)
		}
		writeJSON(w, http.StatusAccepted, o)
		return
	}
	if max := s.opts.MaxConcurrentRuns; max > 0 {
		active := 0
		for _, r := range s.runs {
			if !r.terminal() {
				active++
			}
		}
		if active >= max {
			s.mu.Unlock()
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusTooManyRequests, obj{{"error", obj{{"message", fmt.Sprintf("Too many concurrent runs (max %d)", max)}, {"type", "rate_limit_error"}, {"param", nil}, {"code", "rate_limit_exceeded"}}}})
			return
		}
	}
	id := "run_" + newID()
	model, _ := body["model"].(string)
	if model == "" {
		model = "hermes-agent"
	}
	session, _ := body["session_id"].(string)
	if session == "" {
		session = id
	}
	now := s.now()
	r := &frun{
		id: id, input: input, session: session, model: model,
		created: now, updated: now, status: "queued",
		notify: make(chan struct{}), stopCh: make(chan struct{}),
		approvalActive: true, history: history,
	}
	if fs := s.sessions[session]; fs != nil {
		r.stored = fs
		s.addMessageLocked(fs, "user", input)
	}
	s.runs[id] = r
	s.order = append(s.order, id)
	if key != "" {
		s.idem[key] = idemEntry{runID: id, fingerprint: string(fp)}
	}
	drop := s.faults.DropStartResponse > 0
	if drop {
		s.faults.DropStartResponse--
	}
	s.notifyLocked()
	s.mu.Unlock()

	go s.agent(r)
	if drop {
		panic(http.ErrAbortHandler) // the run exists; its answer is lost
	}
	o := obj{{"run_id", id}, {"status", "started"}}
	if s.opts.Dialect == LastEventID {
		o = append(o, kv{"replayed", false})
	}
	writeJSON(w, http.StatusAccepted, o)
}

func (s *Server) serveStatus(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	s.mu.Lock()
	r := s.lookupLocked(id)
	var o obj
	if r != nil {
		o = s.statusObj(r)
	}
	s.mu.Unlock()
	if r == nil {
		runNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) serveEvents(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	s.mu.Lock()
	r := s.runs[id]
	if r == nil || s.opts.NoEventStreams || (s.opts.Dialect == SingleConsumer && r.gone) {
		s.mu.Unlock()
		runNotFound(w, id)
		return
	}
	r.subscribers++
	drop := s.faults.DropStreamAfter
	s.faults.DropStreamAfter = 0
	cursor := 0
	if s.opts.Dialect == LastEventID {
		if n, err := strconv.Atoi(strings.TrimSpace(req.Header.Get("Last-Event-ID"))); err == nil && n > 0 {
			cursor = min(n, len(r.log))
		}
	}
	s.notifyLocked()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		r.subscribers--
		if s.opts.Dialect == SingleConsumer {
			r.gone = true // Hermes drops the run's transport with its reader
		}
		s.notifyLocked()
		s.mu.Unlock()
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	if s.opts.Dialect == LastEventID {
		_, _ = io.WriteString(w, "retry: 1000\n\n")
	}
	flush()

	sent := 0
	for {
		s.mu.Lock()
		pos := &cursor
		if s.opts.Dialect == SingleConsumer {
			pos = &r.cursor
		}
		if *pos < len(r.log) {
			ev := r.log[*pos]
			*pos++
			s.mu.Unlock()
			var frame []byte
			if s.opts.Dialect == LastEventID {
				frame = append(frame, "id: "+strconv.Itoa(ev.seq)+"\n"...)
			}
			frame = append(frame, "data: "...)
			frame = append(frame, ev.body...)
			frame = append(frame, "\n\n"...)
			if _, err := w.Write(frame); err != nil {
				return
			}
			flush()
			sent++
			if drop > 0 && sent >= drop {
				panic(http.ErrAbortHandler) // cut: no terminator, no close comment
			}
			continue
		}
		if r.finished {
			s.mu.Unlock()
			_, _ = io.WriteString(w, ": stream closed\n\n")
			flush()
			return
		}
		ch := r.notify
		s.mu.Unlock()
		if !s.awaitEvent(w, req, ch, flush) {
			return
		}
	}
}

// approvalChoiceAliases are the aliases Hermes accepts for "once".
var approvalChoiceAliases = map[string]string{"approve": "once", "approved": "once", "allow": "once"}

func (s *Server) serveApproval(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	record := func(a Approval) {
		a.RunID = id
		s.mu.Lock()
		s.approvals = append(s.approvals, a)
		s.notifyLocked()
		s.mu.Unlock()
	}
	r := s.lookup(id)
	if r == nil {
		record(Approval{Status: 404, Code: "run_not_found"})
		runNotFound(w, id)
		return
	}
	var body map[string]any
	raw, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if json.Unmarshal(raw, &body) != nil || body == nil {
		record(Approval{Status: 400})
		writeError(w, http.StatusBadRequest, "Invalid JSON", "")
		return
	}
	choice := strings.ToLower(strings.TrimSpace(fmt.Sprint(body["choice"])))
	if body["choice"] == nil {
		choice = ""
	}
	if a, ok := approvalChoiceAliases[choice]; ok {
		choice = a
	}
	requestID := ""
	if v, present := body["request_id"]; present {
		str, ok := v.(string)
		requestID = strings.TrimSpace(str)
		if !ok || requestID == "" || len(requestID) > 256 {
			record(Approval{Choice: choice, Status: 400, Code: "invalid_approval_request"})
			writeError(w, http.StatusBadRequest, "Approval request_id is invalid.", "invalid_approval_request")
			return
		}
	}
	switch choice {
	case "once", "session", "always", "deny":
	default:
		record(Approval{Choice: choice, RequestID: requestID, Status: 400, Code: "invalid_approval_choice"})
		writeError(w, http.StatusBadRequest, "Invalid approval choice; expected one of: once, session, always, deny", "invalid_approval_choice")
		return
	}
	all := truthy(body["all"]) || truthy(body["resolve_all"])

	s.mu.Lock()
	if s.faults.LoseApproval > 0 {
		s.faults.LoseApproval--
		s.notifyLocked()
		s.mu.Unlock()
		panic(http.ErrAbortHandler) // read, never taken
	}
	if !r.approvalActive {
		s.mu.Unlock()
		record(Approval{Choice: choice, RequestID: requestID, Status: 409, Code: "approval_not_active"})
		writeError(w, http.StatusConflict, "Run has no active approval session: "+id, "approval_not_active")
		return
	}
	var targets []*fapproval
	switch {
	case all:
		targets = append(targets, r.pending...)
	case requestID != "" && s.honoursID(r):
		for _, a := range r.pending {
			if a.id == requestID {
				targets = append(targets, a)
			}
		}
	case len(r.pending) > 0:
		targets = r.pending[:1] // FIFO: the oldest
	}
	if len(targets) == 0 {
		s.mu.Unlock()
		record(Approval{Choice: choice, RequestID: requestID, Status: 409, Code: "approval_not_pending"})
		writeError(w, http.StatusConflict, "Run has no pending approval: "+id, "approval_not_pending")
		return
	}
	for _, a := range targets {
		r.removePending(a)
		a.answer <- choice
	}
	fields := obj{{"choice", choice}}
	resp := obj{{"object", "hermes.run.approval_response"}, {"run_id", id}, {"choice", choice}}
	if requestID != "" && s.honoursID(r) {
		fields = append(fields, kv{"request_id", requestID})
		resp = append(resp, kv{"request_id", requestID})
	}
	fields = append(fields, kv{"resolved", len(targets)})
	resp = append(resp, kv{"resolved", len(targets)})
	r.status = "running"
	r.approvalEvent = nil
	s.emitLocked(r, "approval.responded", fields)
	s.approvals = append(s.approvals, Approval{RunID: id, Choice: choice, RequestID: requestID, Resolved: len(targets), Status: 200})
	drop := s.faults.DropApprovalResponse > 0
	if drop {
		s.faults.DropApprovalResponse--
	}
	s.notifyLocked()
	s.mu.Unlock()
	if drop {
		panic(http.ErrAbortHandler) // taken; its answer is lost
	}
	writeJSON(w, http.StatusOK, resp)
}

func (r *frun) removePending(a *fapproval) {
	for i, p := range r.pending {
		if p == a {
			r.pending = append(r.pending[:i:i], r.pending[i+1:]...)
			return
		}
	}
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		switch strings.ToLower(x) {
		case "1", "true", "yes", "on":
			return true
		}
	case float64:
		return x != 0
	}
	return false
}

func (s *Server) serveStop(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	s.mu.Lock()
	r := s.lookupLocked(id)
	if r == nil {
		s.mu.Unlock()
		runNotFound(w, id)
		return
	}
	if r.terminal() {
		o := s.statusObj(r)
		s.mu.Unlock()
		if s.opts.Dialect == SingleConsumer {
			runNotFound(w, id) // 0.18.2 forgets the agent of a finished run
			return
		}
		writeJSON(w, http.StatusOK, o)
		return
	}
	r.status = "stopping"
	r.lastEvent = "run.stopping"
	r.updated = s.now()
	r.stopAgent()
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{{"run_id", id}, {"status", "stopping"}})
}

// --- the scripted agent ---

// outcome is how a scripted run ends.
type outcome struct {
	status string // completed, failed, cancelled
	output string
	err    string
}

func (s *Server) agent(r *frun) {
	s.mu.Lock()
	if r.status == "queued" {
		r.status = "running"
	}
	s.mu.Unlock()
	in := strings.TrimSpace(r.input)
	var out outcome
	switch {
	case strings.HasPrefix(in, "approve-me:"):
		out = s.approveMe(r, strings.TrimSpace(strings.TrimPrefix(in, "approve-me:")))
	case strings.HasPrefix(in, "approve-seq:"):
		out = s.approveSeq(r, strings.Split(strings.TrimPrefix(in, "approve-seq:"), "||"))
	case in == "slow" || strings.HasPrefix(in, "slow "):
		n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(in, "slow")))
		if n <= 0 {
			n = 5
		}
		out = s.slow(r, n)
	case in == "fail":
		out = outcome{status: "failed", err: "stub agent failure requested by input 'fail'"}
	case in == "fail-soft":
		if !s.say(r, "about ", "to ", "fail ", "softly") {
			out = outcome{status: "cancelled"}
			break
		}
		out = outcome{status: "failed", err: "stub structured failure (input 'fail-soft')"}
	case in == "reason":
		s.emit(r, "reasoning.available", obj{{"text", "stub reasoning: thinking about it"}})
		out = s.sayThen(r, "reasoned answer", "reasoned ", "answer")
	case strings.HasPrefix(in, "tool:"):
		out = s.tool(r, strings.TrimSpace(strings.TrimPrefix(in, "tool:")))
	default:
		text := "stub answer: " + in
		out = s.sayThen(r, text, words(text)...)
	}
	s.finish(r, out)
}

func (s *Server) emit(r *frun, name string, fields obj) {
	s.mu.Lock()
	s.emitLocked(r, name, fields)
	s.mu.Unlock()
}

// pause waits StepDelay on the clock; false if the run was stopped.
func (s *Server) pause(r *frun) bool {
	if s.opts.StepDelay <= 0 {
		select {
		case <-r.stopCh:
			return false
		default:
			return true
		}
	}
	t := s.clk.NewTimer(s.opts.StepDelay)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-r.stopCh:
		return false
	}
}

// say emits text deltas, pausing between them; false if stopped.
func (s *Server) say(r *frun, deltas ...string) bool {
	for i, d := range deltas {
		if i > 0 && !s.pause(r) {
			return false
		}
		s.emit(r, "message.delta", obj{{"delta", d}})
	}
	return true
}

func (s *Server) sayThen(r *frun, output string, deltas ...string) outcome {
	if !s.say(r, deltas...) {
		return outcome{status: "cancelled"}
	}
	return outcome{status: "completed", output: output}
}

// words splits text into deltas that keep their trailing space.
func words(text string) []string {
	f := strings.Fields(text)
	for i := range f[:len(f)-1] {
		f[i] += " "
	}
	return f
}

func (s *Server) slow(r *frun, n int) outcome {
	for i := 1; i <= n; i++ {
		s.emit(r, "message.delta", obj{{"delta", fmt.Sprintf("tick %d/%d ", i, n)}})
		if !s.pause(r) {
			s.emit(r, "message.delta", obj{{"delta", fmt.Sprintf("[interrupted at step %d]", i)}})
			return outcome{status: "cancelled"}
		}
	}
	return outcome{status: "completed", output: fmt.Sprintf("slow done after %d steps", n)}
}

func (s *Server) tool(r *frun, name string) outcome {
	if !s.say(r, "Let ", "me ", "use ", "a ", "tool.") {
		return outcome{status: "cancelled"}
	}
	s.emit(r, "tool.started", obj{{"tool", name}, {"preview", "/srv/example.txt"}})
	if !s.pause(r) {
		return outcome{status: "cancelled"}
	}
	s.emit(r, "tool.completed", obj{{"tool", name}, {"duration", 0.2}, {"error", false}})
	return s.sayThen(r, "tool "+name+" done", "tool ", name+" ", "done")
}

// describe names the dangerous pattern of a command, as Hermes' guard.
func describe(cmd string) string {
	switch {
	case strings.Contains(cmd, "git reset --hard"):
		return "git reset --hard (destroys uncommitted changes)"
	case strings.Contains(cmd, "rm -rf"):
		return "recursive delete"
	}
	return "dangerous command"
}

const (
	deniedMessage  = "BLOCKED: Command denied by user. The user has NOT consented to this action. Do NOT retry this command, do NOT rephrase it, and do NOT attempt the same outcome via a different command. Stop the current workflow and wait for the user to respond before taking any further destructive or irreversible action."
	timeoutMessage = "BLOCKED: Command timed out without user response. The user has NOT consented to this action. Do NOT retry this command, do NOT rephrase it, and do NOT attempt the same outcome via a different command. Stop the current workflow and wait for the user to respond before taking any further destructive or irreversible action. Silence is not consent."
)

func (s *Server) approveMe(r *frun, cmd string) outcome {
	if !s.say(r, "I ", "will ", "run ", "a ", "command.") || !s.pause(r) {
		return outcome{status: "cancelled"}
	}
	s.emit(r, "tool.started", obj{{"tool", "terminal"}, {"preview", cmd}})
	desc := describe(cmd)
	if r.turn != nil && !s.turnControlled() {
		return s.refusedUnasked(r, cmd, desc)
	}

	s.mu.Lock()
	if s.permanent[desc] {
		s.mu.Unlock()
		s.emit(r, "tool.completed", obj{{"tool", "terminal"}, {"duration", 0.004}, {"error", false}})
		guard := pyJSON(map[string]any{"approved": true, "message": nil})
		return s.sayThen(r, "approved: "+cmd+"\nguard="+string(guard), append([]string{"approved: "}, words(cmd)...)...)
	}
	r.nextRequest++
	a := &fapproval{id: fmt.Sprintf("apr_%s_%d", r.id[4:12], r.nextRequest), command: cmd, desc: desc, answer: make(chan string, 1)}
	r.pending = append(r.pending, a)
	ev := obj{
		{"command", cmd}, {"pattern_key", desc}, {"pattern_keys", []string{desc}},
		{"description", desc}, {"allow_permanent", true},
	}
	if s.real019() {
		// The real 0.19.0 says whether "session" is allowed
		// (integration/apiconformance_test.go).
		ev = append(ev, kv{"allow_session", true})
	}
	if s.opts.Dialect == LastEventID || r.turn != nil {
		ev = append(ev, kv{"request_id", a.id})
	}
	ev = append(ev, kv{"event", "approval.request"}, kv{"run_id", r.id}, kv{"timestamp", s.now()},
		kv{"choices", []string{"once", "session", "always", "deny"}})
	r.status = "waiting_for_approval"
	r.approvalEvent = ev
	s.pushLocked(r, "approval.request", ev)
	s.mu.Unlock()

	start := s.clk.Now()
	timer := s.clk.NewTimer(s.opts.ApprovalTimeout)
	choice, how := "", ""
	select {
	case choice = <-a.answer:
		how = "answered"
	case <-timer.C():
		how = "timeout"
	case <-r.stopCh:
		how = "stopped"
	}
	timer.Stop()
	dur := math.Round(s.clk.Now().Sub(start).Seconds()*1000) / 1000
	approved := how == "answered" && choice != "deny"

	s.mu.Lock()
	r.removePending(a)
	r.approvalEvent = nil
	if choice == "always" {
		s.permanent[desc] = true
	}
	if r.status == "waiting_for_approval" {
		r.status = "running"
	}
	s.mu.Unlock()

	s.emit(r, "tool.completed", obj{{"tool", "terminal"}, {"duration", dur}, {"error", !approved}})
	prefix := "blocked: "
	if approved {
		prefix = "approved: "
	}
	deltas := append([]string{prefix}, words(cmd)...)
	if how == "stopped" {
		for _, d := range deltas { // the agent finishes its sentence, then stops
			s.emit(r, "message.delta", obj{{"delta", d}})
		}
		return outcome{status: "cancelled"}
	}
	var guard map[string]any
	switch {
	case approved:
		guard = map[string]any{"approved": true, "description": desc, "message": nil, "user_approved": true}
	case how == "timeout":
		guard = map[string]any{"approved": false, "deny_reason": nil, "description": desc, "message": timeoutMessage, "outcome": "timeout", "pattern_key": desc, "user_consent": false}
	default:
		guard = map[string]any{"approved": false, "deny_reason": nil, "description": desc, "message": deniedMessage, "outcome": "denied", "pattern_key": desc, "user_consent": false}
	}
	return s.sayThen(r, prefix+cmd+"\nguard="+string(pyJSON(guard)), deltas...)
}

// finish publishes the terminal status and event and closes the stream.
func (s *Server) finish(r *frun, out outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.approvalActive = false
	if r.turn != nil {
		s.finishTurnLocked(r, out)
	}
	if r.stored != nil {
		s.storeReplyLocked(r.stored, out)
	}
	for _, a := range r.pending {
		select {
		case a.answer <- "":
		default:
		}
	}
	r.pending = nil
	r.status = out.status
	var fields obj
	switch out.status {
	case "completed":
		in, o := len(strings.Fields(r.input)), len(strings.Fields(out.output))
		r.output = out.output
		r.usage = obj{{"input_tokens", in}, {"output_tokens", o}, {"total_tokens", in + o}}
		fields = obj{{"output", out.output}, {"usage", r.usage}}
	case "failed":
		r.errMsg = out.err
		fields = obj{{"error", out.err}}
	}
	s.emitLocked(r, "run."+out.status, fields)
	r.finished = true
	close(r.notify)
	r.notify = make(chan struct{})
	s.notifyLocked()
}

// honoursID reports whether an answer's request_id picks the approval it
// names on run r (else the run's oldest pending one is resolved, as
// Hermes 0.18.2/0.19.0 and the endpoint hermes-desktop#904 reported).
func (s *Server) honoursID(r *frun) bool {
	return (s.opts.Dialect == LastEventID || r.turn != nil) && !s.opts.IgnoreRequestID
}

// refusedUnasked is a dangerous command in a session turn on 0.18.2 and
// 0.19.0: no approval notifier is registered on that path, so the guard
// answers pending_approval at once and the command does not run (the
// real servers' stub says "pending: CMD"; checked with hermes-peer).
func (s *Server) refusedUnasked(r *frun, cmd, desc string) outcome {
	s.emit(r, "tool.completed", obj{{"tool", "terminal"}, {"duration", 0.004}, {"error", false}})
	msg := "\u26a0\ufe0f " + desc + ". Asking the user for approval.\n\n**Command:**\n```\n" + cmd + "\n```"
	guard := pyJSON(obj{{"approval_pending", true}, {"approved", false}, {"command", cmd}, {"description", desc},
		{"message", msg}, {"pattern_key", desc}, {"status", "pending_approval"}})
	return s.sayThen(r, "pending: "+cmd+"\nguard="+string(guard), append([]string{"pending: "}, words(cmd)...)...)
}

// approveSeq asks for each command in turn, like the stub's
// "approve-seq: C1 || C2" (capture 31_approve_seq): each answer is
// awaited before the next command is asked; the output has one line per
// command, "approved: C" or "blocked: C".
func (s *Server) approveSeq(r *frun, cmds []string) outcome {
	var lines []string
	for _, c := range cmds {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		o := s.approveMe(r, c)
		if o.status != "completed" {
			return o
		}
		line, _, _ := strings.Cut(o.output, "\n")
		lines = append(lines, line)
	}
	return outcome{status: "completed", output: strings.Join(lines, "\n")}
}

// awaitEvent waits for the run's next event (ch closes), writing
// ": keepalive" comments while it is quiet, as Hermes does; it reports
// false when the stream is over (the client left, or a write failed).
func (s *Server) awaitEvent(w io.Writer, req *http.Request, ch <-chan struct{}, flush func()) bool {
	var tick <-chan time.Time
	if s.opts.Keepalive > 0 {
		t := s.clk.NewTimer(s.opts.Keepalive)
		defer t.Stop()
		tick = t.C()
	}
	select {
	case <-ch:
	case <-tick:
		if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil {
			return false
		}
		flush()
	case <-req.Context().Done():
		return false
	}
	return true
}

// checkHistory checks a start's conversation_history as _handle_runs
// does (0.18.2 and 0.19.0): absent or empty is none; otherwise an array
// whose every entry is an object with role and content, else 400 with
// the real messages. It returns the entry count, or the error message.
func checkHistory(raw any) (int, string) {
	if raw == nil {
		return 0, ""
	}
	if l, ok := raw.([]any); ok {
		for i, e := range l {
			m, ok := e.(map[string]any)
			_, role := m["role"]
			_, content := m["content"]
			if !ok || !role || !content {
				return 0, fmt.Sprintf("conversation_history[%d] must have 'role' and 'content' fields", i)
			}
		}
		return len(l), ""
	}
	if b, ok := raw.(string); ok && b == "" {
		return 0, ""
	}
	return 0, "'conversation_history' must be an array of message objects"
}

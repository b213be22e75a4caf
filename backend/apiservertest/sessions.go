package apiservertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Sessions: the API server's /api/sessions resources and the session chat
// stream (POST /api/sessions/{id}/chat/stream). The rules and their
// sources are in backend/hermestest/PROTOCOL.md ("The API server's
// sessions").

// SessionStream selects how a session's chat stream behaves.
type SessionStream int

const (
	// SessionStreamLegacy is Hermes 0.18.2 and 0.19.0
	// (gateway/platforms/api_server.py _handle_session_chat_stream of
	// both archives, checked against the real servers): the turn gets a
	// run id that /v1/runs does not know (status, stop and approval answer
	// 404 run_not_found), no approval is ever asked (no notifier is
	// registered, so a dangerous command is refused without asking: the
	// guard answers pending_approval and the command does not run), and a
	// closed stream neither stops the turn nor is resumable.
	SessionStreamLegacy SessionStream = iota
	// SessionStreamApprovals is upstream main after PR #121769 (commit
	// 583d5b407b, first tag 0.21.6 or 0.22.x): the turn is a run that
	// /v1/runs knows (GET status with the pending approval, POST stop:
	// run.cancelled then done), the stream carries approval.request
	// (run_id, message_id, choices, request_id, command, description)
	// answered on POST /v1/runs/{run_id}/approval, with no
	// approval.responded on the chat stream (the 200 settles it), and a
	// closed stream only detaches (api_server_session_stream.py: "a
	// dropped SSE connection is only a dead transport").
	SessionStreamApprovals
)

// fsession is one stored Hermes session.
type fsession struct {
	id, title, source, model string
	started, lastActive      float64
	messages                 []fmessage
	active                   string // the run of its running turn
}

type fmessage struct {
	id      int
	role    string
	content string
	ts      float64
}

func (s *Server) sessionObj(fs *fsession, listed bool) obj {
	o := obj{
		{"id", fs.id}, {"source", fs.source}, {"user_id", nil}, {"model", fs.model},
		{"title", nilIfEmpty(fs.title)}, {"started_at", fs.started}, {"ended_at", nil}, {"end_reason", nil},
		{"message_count", len(fs.messages)}, {"tool_call_count", 0},
		{"input_tokens", 0}, {"output_tokens", 0}, {"cache_read_tokens", 0}, {"cache_write_tokens", 0},
		{"reasoning_tokens", 0}, {"estimated_cost_usd", nil}, {"actual_cost_usd", nil},
		{"api_call_count", 0}, {"parent_session_id", nil},
	}
	if listed {
		// list_sessions_rich adds last_active (the last message's time)
		// and preview (the first user message, 60 characters).
		o = append(o, kv{"last_active", fs.lastActive}, kv{"preview", preview(fs)})
	}
	return append(o, kv{"has_system_prompt", false}, kv{"has_model_config", false})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func preview(fs *fsession) string {
	for _, m := range fs.messages {
		if m.role == "user" {
			r := []rune(m.content)
			if len(r) > 60 {
				r = r[:60]
			}
			return string(r)
		}
	}
	return ""
}

// AddSession stores a session as another client would have (the CLI, the
// dashboard, another API client): id, title and earlier messages
// (alternately user and assistant). It returns the session's id.
func (s *Server) AddSession(id, title string, messages ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" {
		id = fmt.Sprintf("api_%d_%s", s.clk.Now().Unix(), newID()[:8])
	}
	fs := &fsession{id: id, title: title, source: "cli", model: "hermes-agent", started: s.now()}
	fs.lastActive = fs.started
	for i, m := range messages {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		s.addMessageLocked(fs, role, m)
	}
	s.sessions[id] = fs
	s.notifyLocked()
	return id
}

// SessionInfo is a stored session as the fake holds it.
type SessionInfo struct {
	ID, Title string
	// Messages are the session's messages as "role: content".
	Messages []string
	// Active is the run of its running turn, if any.
	Active string
}

// Session describes a stored session.
func (s *Server) Session(id string) (SessionInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.sessions[id]
	if fs == nil {
		return SessionInfo{}, false
	}
	si := SessionInfo{ID: fs.id, Title: fs.title, Active: fs.active}
	for _, m := range fs.messages {
		si.Messages = append(si.Messages, m.role+": "+m.content)
	}
	return si, true
}

func (s *Server) addMessageLocked(fs *fsession, role, content string) {
	s.nextMessage++
	now := s.now()
	fs.messages = append(fs.messages, fmessage{id: s.nextMessage, role: role, content: content, ts: now})
	fs.lastActive = now
}

func sessionNotFound(w http.ResponseWriter, id string) {
	writeError(w, http.StatusNotFound, "Session not found: "+id, "session_not_found")
}

// serveSessions is GET /api/sessions: the most recently active first,
// limit (default 50, at most 200) and offset, has_more when the page is
// full (_handle_list_sessions of 0.18.2/0.19.0).
func (s *Server) serveSessions(w http.ResponseWriter, req *http.Request) {
	limit := queryInt(req, "limit", 50, 200)
	offset := queryInt(req, "offset", 0, 1_000_000)
	s.mu.Lock()
	all := make([]*fsession, 0, len(s.sessions))
	for _, fs := range s.sessions {
		all = append(all, fs)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].lastActive != all[j].lastActive {
			return all[i].lastActive > all[j].lastActive
		}
		return all[i].id < all[j].id
	})
	page := []any{}
	for i := offset; i < len(all) && len(page) < limit; i++ {
		page = append(page, s.sessionObj(all[i], true))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{{"object", "list"}, {"data", page}, {"limit", limit}, {"offset", offset}, {"has_more", len(page) == limit}})
}

func queryInt(req *http.Request, name string, def, max int) int {
	v, err := strconv.Atoi(req.URL.Query().Get(name))
	if err != nil || v < 0 {
		return def
	}
	return min(v, max)
}

// serveCreateSession is POST /api/sessions {id?, title?}.
func (s *Server) serveCreateSession(w http.ResponseWriter, req *http.Request) {
	var body map[string]any
	raw, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if json.Unmarshal(raw, &body) != nil || body == nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON in request body", "")
		return
	}
	id, _ := body["id"].(string)
	if id == "" {
		id, _ = body["session_id"].(string)
	}
	title, _ := body["title"].(string)
	s.mu.Lock()
	if id == "" {
		id = fmt.Sprintf("api_%d_%s", s.clk.Now().Unix(), newID()[:8])
	}
	if s.sessions[id] != nil {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "Session already exists: "+id, "session_exists")
		return
	}
	fs := &fsession{id: id, title: title, source: "api_server", model: "hermes-agent", started: s.now()}
	fs.lastActive = fs.started
	s.sessions[id] = fs
	o := s.sessionObj(fs, false)
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, obj{{"object", "hermes.session"}, {"session", o}})
}

func (s *Server) serveSession(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	s.mu.Lock()
	fs := s.sessions[id]
	var o obj
	if fs != nil {
		o = s.sessionObj(fs, false)
	}
	s.mu.Unlock()
	if fs == nil {
		sessionNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, obj{{"object", "hermes.session"}, {"session", o}})
}

func (s *Server) serveSessionMessages(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	s.mu.Lock()
	fs := s.sessions[id]
	data := []any{}
	if fs != nil {
		for _, m := range fs.messages {
			data = append(data, obj{{"id", m.id}, {"session_id", fs.id}, {"role", m.role}, {"content", m.content},
				{"tool_call_id", nil}, {"tool_calls", nil}, {"tool_name", nil}, {"timestamp", m.ts},
				{"token_count", nil}, {"finish_reason", nil}, {"reasoning", nil}, {"reasoning_content", nil}})
		}
	}
	s.mu.Unlock()
	if fs == nil {
		sessionNotFound(w, id)
		return
	}
	writeJSON(w, http.StatusOK, obj{{"object", "list"}, {"session_id", id}, {"data", data}})
}

// serveChatStream is POST /api/sessions/{id}/chat/stream {message}: one
// agent turn on the session, streamed as "event: NAME" frames whose data
// carries session_id, run_id, seq and ts.
func (s *Server) serveChatStream(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	var body map[string]any
	raw, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	s.mu.Lock()
	fs := s.sessions[id]
	s.mu.Unlock()
	if fs == nil {
		sessionNotFound(w, id)
		return
	}
	if json.Unmarshal(raw, &body) != nil || body == nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON in request body", "")
		return
	}
	msg, _ := body["message"].(string)
	if msg == "" {
		msg, _ = body["input"].(string)
	}
	if strings.TrimSpace(msg) == "" {
		writeError(w, http.StatusBadRequest, "Missing 'message' field", "missing_message")
		return
	}

	s.mu.Lock()
	now := s.now()
	r := &frun{
		id: "run_" + newID(), input: msg, session: id, model: "hermes-agent",
		created: now, updated: now, status: "running",
		notify: make(chan struct{}), stopCh: make(chan struct{}),
		approvalActive: true, turn: fs, messageID: "msg_" + newID(),
	}
	s.turns[r.id] = r
	s.turnOrder = append(s.turnOrder, r.id)
	fs.active = r.id
	s.addMessageLocked(fs, "user", msg)
	drop := s.faults.DropStreamAfter
	s.faults.DropStreamAfter = 0
	s.pushLocked(r, "run.started", obj{{"user_message", obj{{"role", "user"}, {"content", msg}}}})
	s.pushLocked(r, "message.started", obj{{"message", obj{{"id", r.messageID}, {"role", "assistant"}}}})
	r.subscribers++
	s.notifyLocked()
	s.mu.Unlock()
	go s.agent(r)
	defer func() {
		s.mu.Lock()
		r.subscribers-- // the turn goes on: a closed stream only detaches it
		s.notifyLocked()
		s.mu.Unlock()
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Hermes-Session-Id", id)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	flush()
	cursor, sent := 0, 0
	for {
		s.mu.Lock()
		if cursor < len(r.log) {
			ev := r.log[cursor]
			cursor++
			s.mu.Unlock()
			frame := "event: " + ev.name + "\ndata: " + string(ev.body) + "\n\n"
			if _, err := io.WriteString(w, frame); err != nil {
				return
			}
			flush()
			sent++
			if drop > 0 && sent >= drop {
				panic(http.ErrAbortHandler) // cut: no terminator
			}
			if ev.name == "done" {
				return
			}
			continue
		}
		ch := r.notify
		s.mu.Unlock()
		if !s.awaitEvent(w, req, ch, flush) {
			return
		}
	}
}

// turnControlled reports whether /v1/runs knows session turns (status,
// stop, approval answers).
func (s *Server) turnControlled() bool { return s.opts.SessionStream == SessionStreamApprovals }

// pushTurnLocked writes one event of a session turn in the chat stream's
// shape (0.18.2/0.19.0 _handle_session_chat_stream: tool names in
// tool_name, deltas as assistant.delta, the end as assistant.completed,
// run.completed and done; payload keys first, then session_id, run_id,
// seq and ts).
func (s *Server) pushTurnLocked(r *frun, name string, o obj) {
	fields := obj{}
	for _, e := range o {
		switch e.k {
		case "event", "run_id", "timestamp":
		default:
			fields = append(fields, e)
		}
	}
	get := func(k string) any {
		for _, e := range fields {
			if e.k == k {
				return e.v
			}
		}
		return nil
	}
	var out []struct {
		name string
		o    obj
	}
	add := func(n string, o obj) {
		out = append(out, struct {
			name string
			o    obj
		}{n, o})
	}
	switch name {
	case "run.started", "message.started":
		add(name, fields)
	case "message.delta":
		add("assistant.delta", obj{{"message_id", r.messageID}, {"delta", get("delta")}})
	case "reasoning.available":
		add("tool.progress", obj{{"message_id", r.messageID}, {"tool_name", "_thinking"}, {"delta", get("text")}})
	case "tool.started":
		args := obj{{"path", get("preview")}}
		if get("tool") == "terminal" {
			args = obj{{"command", get("preview")}}
		}
		add("tool.started", obj{{"message_id", r.messageID}, {"tool_name", get("tool")}, {"preview", get("preview")}, {"args", args}})
	case "tool.completed":
		add("tool.completed", obj{{"message_id", r.messageID}, {"tool_name", get("tool")}, {"preview", nil}, {"args", nil}})
	case "approval.request":
		if !s.turnControlled() {
			return
		}
		// _register_session_stream_approval: the queue's data (request_id,
		// the redacted command, description, …), run_id, message_id,
		// choices.
		a := obj{}
		for _, e := range fields {
			if e.k != "choices" {
				a = append(a, e)
			}
		}
		a = append(a, kv{"message_id", r.messageID}, kv{"choices", get("choices")})
		add("approval.request", a)
	case "approval.responded":
		return // not on the chat stream: the answer's 200 settles it
	case "run.completed":
		out0 := get("output")
		add("assistant.completed", obj{{"session_id", r.session}, {"message_id", r.messageID}, {"content", out0},
			{"completed", true}, {"partial", false}, {"interrupted", false}})
		add("run.completed", obj{{"session_id", r.session}, {"message_id", r.messageID}, {"completed", true},
			{"messages", []any{obj{{"role", "assistant"}, {"content", out0}}}}, {"usage", get("usage")}})
		add("done", obj{})
	case "run.failed":
		add("error", obj{{"message", get("error")}})
		add("done", obj{})
	case "run.cancelled":
		add("run.cancelled", obj{{"session_id", r.session}, {"message_id", r.messageID}})
		add("done", obj{})
	default:
		add(name, fields)
	}
	for _, e := range out {
		seq := len(r.log) + 1
		p := e.o
		if !hasKey(p, "session_id") {
			p = append(p, kv{"session_id", r.session})
		}
		p = append(p, kv{"run_id", r.id}, kv{"seq", seq}, kv{"ts", s.now()})
		r.emitted++
		r.log = append(r.log, fevent{seq: seq, name: e.name, body: pyJSON(p)})
	}
	close(r.notify)
	r.notify = make(chan struct{})
}

func hasKey(o obj, k string) bool {
	for _, e := range o {
		if e.k == k {
			return true
		}
	}
	return false
}

// finishTurnLocked records a finished turn on its session.
func (s *Server) finishTurnLocked(r *frun, out outcome) {
	fs := r.turn
	if fs.active == r.id {
		fs.active = ""
	}
	s.storeReplyLocked(fs, out)
}

// storeReplyLocked adds a finished turn's reply to its session.
func (s *Server) storeReplyLocked(fs *fsession, out outcome) {
	switch out.status {
	case "completed":
		s.addMessageLocked(fs, "assistant", out.output)
	case "cancelled":
		s.addMessageLocked(fs, "assistant", "[interrupted]")
	}
}

// Turns returns the run ids of every session turn, in order.
func (s *Server) Turns() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.turnOrder...)
}

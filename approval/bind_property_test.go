package approval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// TestAnswersBoundToWhatWasShown drives an inbox against a model of five
// gateways: two answering id-less in arrival order (Hermes 0.18/0.19's
// dashboard gateway per session, and its API server per run), one by
// server-request id, one by queue id, and an API server's session chat
// stream whose approvals carry an id that its answer endpoint may ignore
// (hermes-desktop#904), through random sequences of
// agents asking (long commands included; at once, or one after another
// within a turn as each answer lands; two agents of one session at once,
// which the id-less gateways may announce in the other order than they
// queue them, as 0.18.2 and 0.19.0 can), answers from Herald (deny or
// allow, in any order) that go through, are cut before the write or cut
// after it, answers from another client, the gateways' reports of each
// answer (a command's tool.complete, a run's approval.responded) arriving
// before or after Herald's answer is confirmed, link cuts and reconnects,
// restarts over the same history file, turns and runs ending and id
// conflicts. It checks issue 16's invariant:
//
//   - every non-deny decision that reached a gateway from Herald applied
//     to an approval whose full command was displayed for the request the
//     user answered (same command, not truncated);
//   - the audit log records the true outcome of every answer Herald sent,
//     or "unknown": never resolved for an answer that did not take effect,
//     never pending again for one that did; for a deny Herald sent while
//     two or more approvals of a session waited at once, which it places
//     by the gateway's report of the command, on the approval the gateway
//     applied it to (where only Herald answered);
//
// and issue 28's: Herald never says that an approval of a session was
// settled in another client when only Herald answered there.
//
// The seed is logged; HERALD_SEED=<seed> replays a run.
func TestAnswersBoundToWhatWasShown(t *testing.T) {
	t.Parallel()
	seed := uint64(rand.Int64())
	if s := os.Getenv("HERALD_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("HERALD_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (rerun with HERALD_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	runs, steps := 40, 80
	if testing.Short() {
		runs = 15
	}
	for i := range runs {
		w := newBindWorld(t, rng, i%2 == 1)
		for s := 0; s < steps && !t.Failed(); s++ {
			w.step()
		}
		w.checkAudit()
		w.close()
		if t.Failed() {
			t.Fatalf("run %d failed; rerun with HERALD_SEED=%d", i, seed)
		}
	}
}

// gwApproval is one approval a model gateway holds.
type gwApproval struct {
	id, cmd string
	session string
	// shown: delivered to Herald when asked (the link was up).
	shown bool
	// key is Herald's key for it, once it arrived there.
	key string
}

// bindWorld is the model: gateways g1 (id-less, FIFO per session), g2
// (server requests by id), g3 (approval events answered by their queue
// id, like a newer API server), g4 (an API server of 0.18/0.19:
// id-less, FIFO per run) and g5 (an API server's session chat stream:
// approval events with an id that the client marks answerable only by
// order, as the endpoint has not shown that it honours ids; it honours
// them in some worlds and resolves the run's oldest in others), one link
// for all, and the inbox under test. g2, g3 and g5 list what waits, by
// id, when Herald re-attaches (approval.pending, a run's status).
type bindWorld struct {
	t    *testing.T
	rng  *rand.Rand
	clk  *clock.Fake
	path string
	st   *BoltStore
	in   *Inbox

	queues map[string][]*gwApproval // "gw/session" -> pending, oldest first
	up     bool                     // the link is up
	nextID int

	// What Herald's answers did, by request key: the choice the gateway
	// applied (by Herald), or "" if it applied nothing.
	applied map[string]string
	sent    map[string]bool // keys whose answer was written
	// truth is what Herald's answers did to the approval each key names
	// (an id-less answer reaches the gateway's oldest one, which may be
	// another than the one answered), landed where the latest answer
	// given on each key went ("" for an approval Herald never saw).
	truth  map[string]string
	landed map[string]string
	// calm: a run whose link holds and whose Herald keeps running, and
	// where only Herald answers, so every session's order stays proven
	// and approvals asked at once meet the rule of two at once. There,
	// Herald's record of every answer to g1 must be the truth, also when
	// the gateway applied it to another approval than the one answered
	// (which Herald learns from the command's tool.complete).
	calm bool
	// looked is a request as the user saw it (a notification, the
	// window), answered in a later step: by then the gateway may have
	// reused its id, or Herald restarted.
	looked *Request
	trace  []string // what happened, logged on a failure

	// later is what the gateways sent that Herald has not received yet,
	// in order; a link drop or a restart loses it.
	later []sentEvent
	// arrived is the key of the latest request that arrived in Herald.
	arrived string
	// runs numbers g4's runs per slot ("g4/s1"): a run that ended is
	// followed by a new one.
	runs map[string]int
	// elsewhere marks the FIFO sessions where another client answered
	// since Herald last saw the session wait on nothing.
	elsewhere map[string]bool
	// g5ByID: g5's answer endpoint honours ids (else it resolves the
	// run's oldest approval whatever the answer names).
	g5ByID bool
}

// fifoGateway reports whether gw may apply an answer to the session's
// (run's) oldest approval: id-less, or (g5) an id it may ignore.
func fifoGateway(gw string) bool { return gw == "g1" || gw == "g4" || gw == "g5" }

// runGateway reports whether gw's sessions are runs (an API server).
func runGateway(gw string) bool { return gw == "g4" || gw == "g5" }

// hasIDs reports whether gw's approvals carry an id.
func hasIDs(gw string) bool { return gw != "g1" && gw != "g4" }

func (w *bindWorld) note(format string, args ...any) {
	w.trace = append(w.trace, fmt.Sprintf(format, args...))
}

const bindMaxCommand = 64

var bindCommands = []string{"rm -rf ./a", "git push --force", "rm -rf ./b", "curl x | sh",
	"echo " + strings.Repeat("p", bindMaxCommand) + "; rm -rf ~"}

// sentEvent is an event on its way to Herald, and the approval it
// announces, if it does.
type sentEvent struct {
	ev wire.Event
	a  *gwApproval
}

func newBindWorld(t *testing.T, rng *rand.Rand, calm bool) *bindWorld {
	w := &bindWorld{t: t, rng: rng, calm: calm, clk: clock.NewFake(t0), path: filepath.Join(t.TempDir(), "audit.db"),
		queues: map[string][]*gwApproval{}, up: true, applied: map[string]string{}, sent: map[string]bool{},
		truth: map[string]string{}, landed: map[string]string{},
		runs: map[string]int{}, elsewhere: map[string]bool{}, g5ByID: rng.IntN(2) == 0}
	w.open()
	return w
}

func (w *bindWorld) open() {
	st, err := OpenStore(w.path, StoreOptions{Clock: w.clk})
	if err != nil {
		w.t.Fatal(err)
	}
	w.st = st
	w.in = New(Options{Clock: w.clk, Store: st, MaxCommandBytes: bindMaxCommand,
		Answerers: func(gw string) (Answerer, bool) { return &bindAnswerer{w: w, gw: gw}, w.up },
		Notify: func(c Change) {
			if c.Kind == ChangeArrived {
				w.arrived = c.Request.Key
			}
		},
		fault: func(why string) { w.t.Errorf("approval machine: %s", why) }})
	if w.up {
		w.attachAll()
	}
}

func (w *bindWorld) close() {
	w.later = nil // sent to the Herald that stops: lost
	w.in.Close()
	if err := w.st.Close(); err != nil {
		w.t.Error(err)
	}
}

// attachAll is Herald (re)attaching every session: the followed event
// says whether a turn is under way (one is while approvals wait).
func (w *bindWorld) attachAll() {
	for _, q := range w.queueKeys() {
		list := w.queues[q]
		gw, sid, _ := strings.Cut(q, "/")
		w.in.Ingest(event(gw, sid, sessionFollowed, w.clk.Now(), map[string]any{"reason": "followed", "running": len(list) > 0 || !w.calm && w.rng.IntN(3) == 0}))
	}
}

func (w *bindWorld) step() {
	defer w.checkElsewhere()
	sessions := []string{"s1", "s2"}
	gw := []string{"g1", "g2", "g3", "g4", "g5"}[w.rng.IntN(5)]
	if w.calm && w.rng.IntN(2) == 0 {
		gw = "g1" // where two at once meet the gateway's reports
	}
	sid := sessions[w.rng.IntN(len(sessions))]
	slot := gw + "/" + sid
	if runGateway(gw) {
		sid = fmt.Sprintf("%s.run%d", sid, w.runs[slot]) // the slot's current run
	}
	q := gw + "/" + sid
	n := w.rng.IntN(100)
	if w.calm && n >= 65 && n < 94 {
		n = 0 // no other client, link cut or restart: what was sent arrives
	}
	switch {
	case n < 8: // what the gateways sent arrives
		w.flush()
	case n < 32: // the agent asks
		a := &gwApproval{cmd: bindCommands[w.rng.IntN(len(bindCommands))], session: sid}
		if hasIDs(gw) {
			w.nextID++
			a.id = fmt.Sprintf("%s-%d", gw, w.nextID)
			if w.rng.IntN(8) == 0 {
				// An id still open used again for another command: a
				// conflict. (Ids are never reused otherwise: the same id
				// and command again read as a re-delivery.)
				for _, k := range w.queueKeys() {
					list := w.queues[k]
					for _, x := range list {
						// (g3 lists but never delivers again: it reuses
						// only ids Herald was shown, or Herald could not
						// tell the requests apart at all.)
						if strings.HasPrefix(k, gw+"/") && x.id != "" && x.cmd != a.cmd && (gw == "g2" || x.shown) {
							a.id = x.id
						}
					}
				}
			}
		}
		if fifoGateway(gw) && (w.rng.IntN(3) == 0 || w.calm && w.rng.IntN(2) == 0) {
			// Two agents of the session ask at once.
			b := &gwApproval{cmd: bindCommands[w.rng.IntN(len(bindCommands))], session: sid}
			w.askTwo(gw, a, b)
		} else {
			w.ask(gw, a)
		}
		w.flush()
	case n < 65: // the user answers what is shown, now or later
		var r Request
		if w.looked != nil && w.rng.IntN(2) == 0 {
			r, w.looked = *w.looked, nil
			w.note("the user answers %s %q, shown earlier", r.Key, r.Command)
		} else {
			p := w.in.Pending()
			if len(p) == 0 {
				return
			}
			r = p[w.rng.IntN(len(p))]
			if w.rng.IntN(4) == 0 {
				w.looked = &r
				w.note("the user looks at %s %q", r.Key, r.Command)
				return
			}
		}
		choice := ChoiceDeny
		if w.rng.IntN(3) > 0 && !(w.calm && w.rng.IntN(2) == 0) {
			choice = ChoiceOnce
		}
		mode := []string{"ok", "ok", "ok", "cut-before", "cut-after"}[w.rng.IntN(5)]
		if w.calm {
			mode = "ok"
		}
		ctx := context.WithValue(context.Background(), callKey{}, &answerCall{key: r.Key, choice: choice, mode: mode})
		ctx = context.WithValue(ctx, shownKey{}, r)
		err := w.in.Answer(ctx, r.Key, choice, "prop", false)
		w.note("Herald answers %s %q %s (%s): %v", r.Key, r.Command, choice, mode, err)
		if w.rng.IntN(2) == 0 {
			w.flush() // the gateway's report right after the confirmation
		}
	case n < 73: // another client answers the oldest one there
		if len(w.queues[q]) == 0 {
			return
		}
		a := w.queues[q][0]
		w.queues[q] = w.queues[q][1:]
		w.note("%s answered elsewhere: %q %q", q, a.id, a.cmd)
		switch {
		case fifoGateway(gw):
			w.elsewhere[q] = true
			// 0.18/0.19 say so only through what the tool did next (an
			// API server: approval.responded too).
			w.settled(gw, a, []string{ChoiceOnce, ChoiceDeny}[w.rng.IntN(2)])
			w.flush()
		case gw == "g2" && w.up:
			w.in.Ingest(cancel(gw, sid, a.id, "resolved", w.clk.Now()))
		case w.up:
			w.in.Ingest(toolDone(gw, sid, a.cmd, []string{"", deniedBy}[w.rng.IntN(2)], w.clk.Now()))
		}
	case n < 80: // the link drops
		w.down()
		w.note("link drops")
	case n < 90: // it comes back
		if !w.up {
			w.up = true
			w.note("reconnect")
			w.reconnect()
		}
	case n < 94: // Herald restarts; connected, it lists what is open
		w.note("restart")
		w.close()
		w.open()
		if w.up {
			w.relist()
			w.list()
		}
	default: // a turn (a run) ends: only when nothing waits there
		if !fifoGateway(gw) || len(w.queues[q]) != 0 || !w.up {
			return
		}
		w.note("%s ends", q)
		end := event(gw, sid, wire.MessageComplete, w.clk.Now(), map[string]any{"status": "complete"})
		if runGateway(gw) {
			end = event(gw, sid, wire.RunCompleted, w.clk.Now(), map[string]any{"output": "done"})
			w.runs[slot]++
		}
		w.send(end)
		w.flush()
		if !slices.ContainsFunc(w.in.Pending(), func(r Request) bool { return r.Gateway == gw && r.Session == sid }) {
			delete(w.elsewhere, q) // Herald saw the session wait on nothing
		}
	}
}

// ask is the agent of session a.session asking a: queued at the gateway
// and sent to Herald (received when the link delivers it).
func (w *bindWorld) ask(gw string, a *gwApproval) {
	w.queues[gw+"/"+a.session] = append(w.queues[gw+"/"+a.session], a)
	w.note("%s/%s asks %q %q (link up %v)", gw, a.session, a.id, a.cmd, w.up)
	w.announce(gw, a)
}

// askTwo is two agents of one session of an id-less gateway asking at
// once: queued a then b, and announced in either order, since 0.18.2 and
// 0.19.0 queue and announce in two steps (PROTOCOL.md, "Two approvals in
// one turn"). Both announcements reach Herald together.
func (w *bindWorld) askTwo(gw string, a, b *gwApproval) {
	q := gw + "/" + a.session
	w.queues[q] = append(w.queues[q], a, b)
	swap := w.rng.IntN(2) == 0
	w.note("%s asks %q and %q at once, announced swapped %v (link up %v)", q, a.cmd, b.cmd, swap, w.up)
	if swap {
		a, b = b, a
	}
	w.announce(gw, a)
	w.announce(gw, b)
}

// announce sends Herald the approval.request for a, queued.
func (w *bindWorld) announce(gw string, a *gwApproval) {
	a.shown = w.up
	var ev wire.Event
	switch gw {
	case "g1":
		ev = legacy(gw, a.session, a.cmd, w.clk.Now())
	case "g4":
		ev = event(gw, a.session, wire.ApprovalRequest, w.clk.Now(), map[string]any{"command": a.cmd, "description": "d", "choices": knownChoices})
	case "g3":
		ev = event(gw, a.session, wire.ApprovalRequest, w.clk.Now(), map[string]any{"command": a.cmd, "request_id": a.id, "choices": knownChoices})
	case "g5":
		ev = event(gw, a.session, wire.ApprovalRequest, w.clk.Now(), map[string]any{"command": a.cmd, "request_id": a.id, "choices": knownChoices, "answer_by_order": true})
	default:
		ev = srq(gw, a.session, a.id, a.cmd, w.clk.Now())
	}
	if w.up {
		w.later = append(w.later, sentEvent{ev, a})
	}
}

// settled is what a FIFO gateway sends once an answer (choice, from
// Herald or another client) settled a: the command's tool.complete (an
// API server: approval.responded, then tool.completed without the
// command); the agent then goes on, and may ask its next approval in the
// same turn.
func (w *bindWorld) settled(gw string, a *gwApproval, choice string) {
	ran := choice != ChoiceDeny
	switch gw {
	case "g4":
		w.send(event(gw, a.session, approvalResponded, w.clk.Now(), map[string]any{"choice": choice, "resolved": 1}))
		w.send(event(gw, a.session, wire.ToolComplete, w.clk.Now(), map[string]any{"tool_id": "t", "name": "terminal"}))
	case "g5":
		// The chat stream carries no approval.responded: only the tool's
		// end, without its command.
		w.send(event(gw, a.session, wire.ToolComplete, w.clk.Now(), map[string]any{"tool_id": "t", "name": "terminal"}))
	default:
		w.send(toolDone(gw, a.session, a.cmd, map[bool]string{true: "", false: deniedBy}[ran], w.clk.Now()))
	}
	w.note("%s/%s reports %q %s", gw, a.session, a.cmd, choice)
	if w.rng.IntN(2) == 0 {
		w.ask(gw, &gwApproval{cmd: bindCommands[w.rng.IntN(len(bindCommands))], session: a.session})
	}
}

// send is a gateway sending ev to Herald: lost while the link is down.
func (w *bindWorld) send(ev wire.Event) {
	if w.up {
		w.later = append(w.later, sentEvent{ev: ev})
	}
}

// flush delivers, in order, what the gateways sent, and learns Herald's
// key of each approval that arrives.
func (w *bindWorld) flush() {
	evs := w.later
	w.later = nil
	for _, s := range evs {
		w.arrived = ""
		w.in.Ingest(s.ev)
		if s.a != nil && w.arrived != "" {
			s.a.key = w.arrived
		}
	}
}

// down drops the link: what was on its way is lost.
func (w *bindWorld) down() {
	w.up, w.later = false, nil
}

// checkElsewhere is issue 28's check: Herald says an approval of a FIFO
// session was settled without its answer only where another client
// answered since Herald last saw the session wait on nothing.
func (w *bindWorld) checkElsewhere() {
	for _, r := range w.in.Pending() {
		if q := r.Gateway + "/" + r.Session; r.Unbound == unboundElsewhereAnswer && !w.elsewhere[q] {
			w.t.Errorf("%s %q: Herald says an approval of %s was settled in another client, but only Herald answered there", r.Key, r.Command, q)
			w.dump(r.Key)
		}
	}
}

// list reports, for every session of g2 and g3, what the gateway holds
// by id (approval.pending; a run's status), as the clients do after a
// re-attach; for g5's runs, a run's status: the latest approval asked,
// not a complete list.
func (w *bindWorld) list() {
	for _, q := range w.queueKeys() {
		if list := w.queues[q]; strings.HasPrefix(q, "g5/") && len(list) > 0 {
			a := list[len(list)-1]
			w.in.Ingest(listedEv("g5", a.session, false, listedEntry{RequestID: a.id, Command: a.cmd}))
		}
	}
	for _, gw := range []string{"g2", "g3"} {
		for _, sid := range []string{"s1", "s2"} {
			var entries []listedEntry
			for _, a := range w.queues[gw+"/"+sid] {
				e := listedEntry{RequestID: a.id, Command: a.cmd}
				if gw == "g2" {
					e = listedEntry{ID: a.id, RequestID: "q-" + a.id, Command: a.cmd}
				}
				entries = append(entries, e)
			}
			w.in.Ingest(listedEv(gw, sid, true, entries...))
		}
	}
}

// reconnect: the id-less gateway cannot replay (Herald says events may be
// missing); the other lists what is still open, and Herald withdraws
// what it does not list.
func (w *bindWorld) reconnect() {
	for _, q := range w.queueKeys() {
		gw, sid, _ := strings.Cut(q, "/")
		if fifoGateway(gw) {
			w.in.Ingest(resync(gw, sid, "no-replay", w.clk.Now()))
		}
	}
	open := w.relist()
	for _, r := range w.in.Pending() {
		if r.Gateway == "g2" && r.RequestID != "" && !open[r.Session+"/"+r.RequestID] {
			w.in.Ingest(cancel("g2", r.Session, r.RequestID, "not_pending_after_reconnect", w.clk.Now()))
		}
	}
	w.list()
}

// relist delivers the server requests the gateway holds open (a
// reconnect's open_requests) and returns them as "session/id".
func (w *bindWorld) relist() map[string]bool {
	open := map[string]bool{}
	for _, q := range w.queueKeys() {
		list := w.queues[q]
		if strings.HasPrefix(q, "g2/") {
			for _, a := range list {
				open[a.session+"/"+a.id] = true
				ev := srq("g2", a.session, a.id, a.cmd, w.clk.Now())
				ev.Replayed = true
				w.in.Ingest(ev)
			}
		}
	}
	return open
}

// shownKey carries, in an Answer's context, the request as the user saw
// it when they chose.
type shownKey struct{}

// bindAnswerer is the model gateways' answer path.
type bindAnswerer struct {
	w  *bindWorld
	gw string
}

func (a *bindAnswerer) RespondApproval(ctx context.Context, session, choice, requestID string) (int, error) {
	return a.apply(ctx, session, requestID, choice)
}

func (a *bindAnswerer) RespondServerRequest(ctx context.Context, id, choice string) error {
	_, err := a.apply(ctx, "", id, choice)
	return err
}

func (a *bindAnswerer) apply(ctx context.Context, session, id, choice string) (int, error) {
	w := a.w
	c, _ := ctx.Value(callKey{}).(*answerCall)
	if c == nil {
		w.t.Errorf("an answer %q reached %s without a user's Answer", choice, a.gw)
		return 0, errors.New("unexpected")
	}
	if c.mode == "cut-before" {
		w.down()
		return 0, errors.New("not connected to the gateway")
	}
	shown, _ := ctx.Value(shownKey{}).(Request) // as the user saw it
	// Find what the gateway applies the answer to.
	var hit *gwApproval
	var q string
	switch {
	case id == "" || a.gw == "g5" && !w.g5ByID:
		q = a.gw + "/" + session
		if len(w.queues[q]) > 0 {
			hit = w.queues[q][0]
		}
	case session != "":
		// An event-form answer names its session and the queue id in it.
		for _, x := range w.queues[a.gw+"/"+session] {
			if x.id == id {
				hit, q = x, a.gw+"/"+session
			}
		}
	default:
		for _, k := range w.queueKeys() {
			list := w.queues[k]
			for _, x := range list {
				if strings.HasPrefix(k, a.gw+"/") && x.id == id {
					hit, q = x, k // the latest holder of a repeated id wins
				}
			}
		}
	}
	w.sent[c.key] = true
	n := 0
	if hit != nil {
		n = 1
		w.queues[q] = slices.DeleteFunc(w.queues[q], func(x *gwApproval) bool { return x == hit })
		w.applied[c.key], w.landed[c.key] = choice, hit.key
		if hit.key != "" {
			w.truth[hit.key] = choice
		}
		if hit.key != "" && hit.key != c.key {
			w.note("the gateway applies Herald's %s on %s to %s %q, which it holds first", choice, c.key, hit.key, hit.cmd)
		}
		if choice != ChoiceDeny && (hit.cmd != shown.Command || shown.Truncated) {
			w.t.Errorf("%s applied %q from Herald to %q, but the request answered showed %q (truncated %v, key %s)",
				a.gw, choice, hit.cmd, shown.Command, shown.Truncated, c.key)
			w.dump(c.key)
		}
		if fifoGateway(a.gw) {
			w.settled(a.gw, hit, choice)
		}
		if a.gw == "g5" && c.mode != "cut-after" {
			// Its 200 settles it; Herald's client reports it
			// (approval.responded), as the chat stream does not.
			w.send(event(a.gw, session, approvalResponded, w.clk.Now(), map[string]any{"choice": choice, "resolved": 1, "request_id": id, "synthesized": true}))
		}
	}
	if c.mode == "cut-after" {
		w.down()
		return 0, fmt.Errorf("sending the approval answer failed: %w", wire.ErrOutcomeUnknown)
	}
	if w.rng.IntN(2) == 0 {
		w.flush() // the gateway's report before its reply confirms the answer
	}
	if id != "" && hit == nil {
		return 0, nil // the response frame went out; nothing waited
	}
	return n, nil
}

// checkAudit compares the audit log's last word on every request Herald
// answered with what the gateways did.
func (w *bindWorld) checkAudit() {
	es, err := w.st.List(Filter{})
	if err != nil {
		w.t.Fatal(err)
	}
	// A key names one request, across restarts: its last entry is the
	// last word on it.
	last, command := map[string]Entry{}, map[string]string{}
	for _, e := range es {
		if c, ok := command[e.Key]; ok && e.Command != "" && c != e.Command && c != Redact(e.Command) && e.Command != Redact(c) {
			w.t.Errorf("%s: the audit log shows %q and %q under one key", e.Key, c, e.Command)
		}
		if _, ok := command[e.Key]; !ok && e.Command != "" {
			command[e.Key] = e.Command
		}
		last[e.Key] = e
	}
	for key, e := range last {
		applied, truth := w.applied[key], w.truth[key]
		pending := e.State == StatePending || e.State == StateAnswering
		if gw, _, _ := strings.Cut(key, "/"); fifoGateway(gw) {
			// An id-less answer reaches the gateway's oldest approval,
			// which may be another than the one answered (two asked at
			// once, announced in the other order). Herald records it on
			// the one it reached when the gateway's report says which
			// (truth), else on the one answered (applied); in a calm run
			// g1 reports every one, so its record is the truth.
			strict := w.calm && gw == "g1"
			landed, ok := w.landed[key]
			switch {
			case e.State == StateResolved && e.Choice != truth && (strict || e.Choice != applied):
				w.t.Errorf("%s: the audit log says resolved %q, but Herald's answers applied %q to it (%q given on it)", key, e.Choice, truth, applied)
				w.dump(key)
			case pending && strict && w.sent[key] && truth != "":
				w.t.Errorf("%s: Herald's answers applied %q to it, but the audit log ends %s", key, truth, e.State)
				w.dump(key)
			case pending && ok && applied != "" && (landed == key || landed == ""):
				w.t.Errorf("%s: the gateway applied %q from Herald, but the audit log ends %s", key, applied, e.State)
				w.dump(key)
			}
			continue
		}
		if !w.sent[key] {
			continue
		}
		switch {
		case e.State == StateResolved && applied == "":
			w.t.Errorf("%s: the audit log says resolved %q, but the gateway applied nothing from Herald", key, e.Choice)
			w.dump(key)
		case e.State == StateResolved && applied != e.Choice:
			w.t.Errorf("%s: the audit log says resolved %q, the gateway applied %q", key, e.Choice, applied)
		case applied != "" && pending:
			w.t.Errorf("%s: the gateway applied %q from Herald, but the audit log ends %s", key, applied, e.State)
			w.dump(key)
		}
	}
}

// dump logs the audit entries of key.
func (w *bindWorld) dump(key string) {
	for _, l := range w.trace {
		w.t.Logf("  step: %s", l)
	}
	es, _ := w.st.List(Filter{Key: key})
	for _, x := range es {
		w.t.Logf("  %s %s %s uncertain=%v detail=%q error=%q unbound=%q", x.Kind, x.State, x.Choice, x.Uncertain, x.Detail, x.Error, x.Unbound)
	}
	for _, q := range w.queueKeys() {
		list := w.queues[q]
		for _, a := range list {
			w.t.Logf("  gateway %s holds %q %q", q, a.id, a.cmd)
		}
	}
}

// queueKeys are the model's sessions in a fixed order, so a seed replays.
func (w *bindWorld) queueKeys() []string {
	keys := make([]string, 0, len(w.queues))
	for k := range w.queues {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

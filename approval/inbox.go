package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// Defaults for Options.
const (
	// DefaultTimeout is Hermes' default approvals.timeout.
	DefaultTimeout = 300 * time.Second
	// DefaultKeep is how long ended requests stay in the inbox.
	DefaultKeep = 24 * time.Hour
)

// Answerer sends answers to one gateway; *gateway.Client satisfies it.
type Answerer interface {
	// RespondApproval answers the event form and returns how many pending
	// approvals the gateway resolved (0: nothing was pending any more).
	RespondApproval(ctx context.Context, sessionID, choice, requestID string) (int, error)
	// RespondServerRequest answers the server-request form; nil means the
	// response frame was written.
	RespondServerRequest(ctx context.Context, requestID, choice string) error
}

// Options configures an Inbox.
type Options struct {
	// Clock drives expiry and time stamps (default clock.Real).
	Clock clock.Clock
	// Store receives an audit entry for every arrival and state change;
	// nil keeps no log.
	Store Store
	// Answerers returns the Answerer for a gateway, false when Herald is
	// not connected to it.
	Answerers func(gateway string) (Answerer, bool)
	// Timeout returns a gateway's approvals.timeout; nil or a result <= 0
	// means DefaultTimeout.
	Timeout func(gateway string) time.Duration
	// Keep is how long ended requests stay in the inbox (default
	// DefaultKeep); the Store keeps its own, longer history.
	Keep time.Duration
	// Notify receives every change, in order and one at a time, on the
	// goroutine that caused it or the expiry timer's. It may call the
	// Inbox; it should not block for long.
	Notify func(Change)
	// MaxCommandBytes, MaxPending and MaxEnded bound what a gateway can
	// make the inbox hold (defaults DefaultMaxCommandBytes,
	// DefaultMaxPending, DefaultMaxEnded; see limits.go).
	MaxCommandBytes, MaxPending, MaxEnded int
	// SessionTitle returns the title a gateway gives a session (live id,
	// stored id), "" when none; each arrival records it as
	// Request.SessionTitle. It is called under the inbox's lock and must
	// not call the Inbox.
	SessionTitle func(gateway, session, stored string) string
}

// ChangeKind says what happened to a request.
type ChangeKind string

const (
	// ChangeArrived is a new request.
	ChangeArrived ChangeKind = "arrived"
	// ChangeUpdated is a change of state, flags or error.
	ChangeUpdated ChangeKind = "updated"
	// ChangeRemoved is an ended request leaving the inbox after Keep.
	ChangeRemoved ChangeKind = "removed"
)

// Change is one notification: the request as it is after the change.
type Change struct {
	Kind    ChangeKind // what happened
	At      time.Time  // when it happened
	Request Request    // a copy, after the change
	// Refused is how many requests a ChangeRefused stands for: 1, or
	// more when the gateway's link refused them together.
	Refused int
}

// Snapshot is the whole inbox for a UI.
type Snapshot struct {
	At time.Time // when it was taken
	// Requests are all requests in the inbox, live and ended, by ReceivedAt.
	Requests []Request
	// AuditError is why the audit log could not be written, if it failed
	// most recently; approvals keep working without it.
	AuditError string
	// Floods are gateways that sent more open approvals than the inbox
	// takes, by gateway name; surfaces show Flood.Message.
	Floods []Flood
}

// ending is a final state with its outcome.
type ending struct {
	state State
	out   Outcome
}

type item struct {
	Request
	seq uint64
	// toolSeen: the event form's tool.complete has been matched to it.
	toolSeen bool
	// hint is what the gateway reported while an answer was in flight; it
	// decides the outcome once the send returns.
	hint *ending
	// responded is the choice the API server's approval.responded named
	// while Herald's answer was in flight: if the send then fails with an
	// unknown outcome, the server has already said how it ended.
	responded string
	// restored: brought back from the audit log at start (see
	// restoreLocked); a new arrival of the same request adopts it.
	restored bool
	// fromLog: restored from the audit log at start, whatever became of
	// it since; an arrival reusing its id is checked against it by id
	// (reusedIDLocked), as its key is the last run's.
	fromLog bool
	// reusedInFlight: the gateway used its id for another command while
	// Herald's answer to it was on its way; the answer may have reached
	// either, so its outcome is unknown (see settleLocked).
	reusedInFlight bool
	// recorded is what a restored request's choices were before the
	// restart made it deny-only; a listing by its id gives them back
	// (see listedLocked).
	recorded []string
	// counted is how the item is counted in Inbox.live/ended (see count).
	counted counted
}

type counted uint8

const (
	countedNone counted = iota
	countedLive
	countedEnded
)

// Inbox holds approval requests from all gateways. It is safe for
// concurrent use. Call Close when done.
type Inbox struct {
	clk       clock.Clock
	store     Store
	answerers func(string) (Answerer, bool)
	timeout   func(string) time.Duration
	keep      time.Duration
	notify    func(Change)

	mu       sync.Mutex
	items    map[string]*item
	seq      uint64
	arrivals map[string]int // per event-form session: arrivals so far
	boot     string         // start tag in made-up keys (see bootTag)
	timer    clock.Timer
	armed    time.Time // deadline the timer is set for; zero when stopped
	out      []Change  // changes not yet recorded and notified
	draining bool
	auditErr string

	maxCommand, maxPending, maxEnded int
	title                            func(gateway, session, stored string) string
	// live and ended count each gateway's requests by state, kept up to
	// date on every change (emitLocked), so bounds cost no scan.
	live, ended map[string]int
	floods      map[string]*Flood
	// order is the proof, per session of a FIFO gateway, of which
	// approval an id-less answer reaches (see order.go).
	order order

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New returns an inbox and starts its expiry timer.
func New(opt Options) *Inbox {
	in := &Inbox{
		clk:       opt.Clock,
		store:     opt.Store,
		answerers: opt.Answerers,
		timeout:   opt.Timeout,
		keep:      opt.Keep,
		notify:    opt.Notify,
		title:     opt.SessionTitle,
		items:     map[string]*item{},
		arrivals:  map[string]int{},
		floods:    map[string]*Flood{},
		live:      map[string]int{},
		ended:     map[string]int{},
		order:     newOrder(),
		stop:      make(chan struct{}),

		maxCommand: opt.MaxCommandBytes,
		maxPending: opt.MaxPending,
		maxEnded:   opt.MaxEnded,
		done:       make(chan struct{}),
	}
	if in.clk == nil {
		in.clk = clock.Real{}
	}
	if in.answerers == nil {
		in.answerers = func(string) (Answerer, bool) { return nil, false }
	}
	if in.keep <= 0 {
		in.keep = DefaultKeep
	}
	if in.maxCommand <= 0 {
		in.maxCommand = DefaultMaxCommandBytes
	}
	if in.maxPending <= 0 {
		in.maxPending = DefaultMaxPending
	}
	if in.maxEnded <= 0 {
		in.maxEnded = DefaultMaxEnded
	}
	in.timer = in.clk.NewTimer(time.Hour)
	in.timer.Stop()
	in.boot = bootTag(in.store)
	go in.run()
	in.do(in.restoreLocked)
	return in
}

// Close stops the expiry timer. It does not close the Store.
func (in *Inbox) Close() {
	in.closeOnce.Do(func() {
		close(in.stop)
		<-in.done
		in.timer.Stop()
	})
}

func (in *Inbox) run() {
	defer close(in.done)
	for {
		select {
		case <-in.stop:
			return
		case <-in.timer.C():
			in.do(func(time.Time) { in.armed = time.Time{} })
		}
	}
}

// do runs fn under the lock after expiring what is due, re-arms the timer
// and then delivers the changes.
func (in *Inbox) do(fn func(now time.Time)) {
	in.mu.Lock()
	now := in.clk.Now()
	in.sweepLocked(now)
	in.tidyLocked(now) // fn sees the inbox within its bounds
	fn(now)
	in.tidyLocked(now)
	in.rearmLocked(now)
	in.mu.Unlock()
	in.flush()
}

// sweepLocked expires pending requests past their deadline and forgets
// ended ones (see forgetAt).
func (in *Inbox) sweepLocked(now time.Time) {
	var due []*item
	for _, it := range in.items {
		if ((it.State == StatePending || it.State == StateSentUnknown) && !now.Before(it.ExpiresAt)) || (!it.State.Live() && !now.Before(in.forgetAt(it))) {
			due = append(due, it)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].seq < due[j].seq })
	for _, it := range due {
		if it.State == StatePending {
			in.endLocked(it, ending{StateExpired, Outcome{Detail: "no answer before the gateway's timeout"}}, now)
			continue
		}
		if it.State == StateSentUnknown {
			it.State = StateOutcomeUnknown
			it.Outcome.Detail = fmt.Sprintf("outcome unknown: Herald's answer %q was sent before the link dropped, and the gateway's timeout passed without it saying whether the answer took effect", it.Outcome.Choice)
			it.Outcome.At = now
			in.emitLocked(ChangeUpdated, it, now)
			continue
		}
		delete(in.items, it.Key)
		in.emitLocked(ChangeRemoved, it, now)
	}
}

// forgetAt is when an ended request leaves the inbox: Keep after it ended,
// and never before Keep after the gateway stopped waiting, so that a late
// re-delivery finds it rather than creating it anew.
func (in *Inbox) forgetAt(it *item) time.Time {
	if it.ExpiresAt.After(it.Outcome.At) {
		return it.ExpiresAt.Add(in.keep)
	}
	return it.Outcome.At.Add(in.keep)
}

// tidyLocked keeps the inbox within its bounds after a change.
func (in *Inbox) tidyLocked(now time.Time) {
	var over map[string][]*item
	for gw, n := range in.ended {
		if n > in.maxEnded {
			if over == nil {
				over = map[string][]*item{}
			}
			over[gw] = nil
		}
	}
	if over != nil {
		for _, it := range in.items {
			if _, ok := over[it.Gateway]; ok && !it.State.Live() {
				over[it.Gateway] = append(over[it.Gateway], it)
			}
		}
		in.capEndedLocked(over, now)
	}
	if len(in.floods) > 0 {
		in.settleFloodsLocked()
	}
}

func (in *Inbox) rearmLocked(now time.Time) {
	var next time.Time
	for _, it := range in.items {
		at := in.forgetAt(it)
		switch {
		case it.State == StatePending:
			at = it.ExpiresAt
		case it.State == StateAnswering:
			continue
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	switch {
	case next.Equal(in.armed):
	case next.IsZero():
		in.timer.Stop()
	default:
		in.timer.Reset(next.Sub(now))
	}
	in.armed = next
}

func (in *Inbox) emitLocked(kind ChangeKind, it *item, now time.Time) {
	in.countLocked(it, kind == ChangeRemoved)
	in.out = append(in.out, Change{Kind: kind, At: now, Request: it.clone()})
}

// flush records and notifies queued changes. One caller drains at a time,
// so changes go out in order; a Notify that calls back into the inbox
// only queues more for the drainer.
func (in *Inbox) flush() {
	in.mu.Lock()
	if in.draining {
		in.mu.Unlock()
		return
	}
	in.draining = true
	for len(in.out) > 0 {
		batch := in.out
		in.out = nil
		auditErr := in.auditErr
		in.mu.Unlock()
		for _, c := range batch {
			if in.store != nil && c.Kind != ChangeRemoved {
				auditErr = ""
				if err := in.store.Record(entryFor(c)); err != nil {
					auditErr = fmt.Sprintf("the approval history could not be written (%s); approvals still work, but are not being logged", scrub(err.Error()))
				}
			}
			if in.notify != nil {
				in.notify(c)
			}
		}
		in.mu.Lock()
		in.auditErr = auditErr
	}
	in.draining = false
	in.mu.Unlock()
}

// endLocked moves a pending request to a final state. For a request being
// answered it only notes what the gateway reported; the send's result
// then decides. Ended requests are left alone.
func (in *Inbox) endLocked(it *item, e ending, now time.Time) {
	switch it.State {
	case StatePending:
		it.State, it.Outcome, it.Uncertain = e.state, e.out, false
		it.Outcome.At = now
		in.emitLocked(ChangeUpdated, it, now)
	case StateAnswering:
		if it.hint == nil {
			it.hint = &e
		}
	case StateSentUnknown:
		e = unknownEnding(it, e)
		it.State, it.Outcome = e.state, e.out
		it.Outcome.At = now
		in.emitLocked(ChangeUpdated, it, now)
	}
}

// Get returns the request with key.
func (in *Inbox) Get(key string) (Request, bool) {
	var r Request
	var ok bool
	in.do(func(time.Time) {
		var it *item
		if it, ok = in.items[key]; ok {
			r = it.clone()
		}
	})
	return r, ok
}

// Pending lists the pending and answering requests, oldest first.
func (in *Inbox) Pending() []Request {
	var out []Request
	for _, r := range in.Snapshot().Requests {
		if r.State.Live() {
			out = append(out, r)
		}
	}
	return out
}

// Snapshot returns every request in the inbox, oldest first.
func (in *Inbox) Snapshot() Snapshot {
	var s Snapshot
	var seqs []uint64
	in.do(func(now time.Time) {
		s.At, s.AuditError = now, in.auditErr
		if len(in.floods) > 0 {
			s.Floods = in.floodsLocked()
		}
		seqs = make([]uint64, 0, len(in.items))
		s.Requests = make([]Request, 0, len(in.items))
		for _, it := range in.items {
			s.Requests = append(s.Requests, it.clone())
			seqs = append(seqs, it.seq)
		}
	})
	// Sorted outside the lock: a window's view build must not hold up an
	// arriving approval.
	sort.Sort(bySeq{s.Requests, seqs})
	return s
}

// bySeq sorts requests by ReceivedAt, then arrival.
type bySeq struct {
	rs   []Request
	seqs []uint64
}

func (b bySeq) Len() int { return len(b.rs) }
func (b bySeq) Swap(i, j int) {
	b.rs[i], b.rs[j] = b.rs[j], b.rs[i]
	b.seqs[i], b.seqs[j] = b.seqs[j], b.seqs[i]
}
func (b bySeq) Less(i, j int) bool {
	if !b.rs[i].ReceivedAt.Equal(b.rs[j].ReceivedAt) {
		return b.rs[i].ReceivedAt.Before(b.rs[j].ReceivedAt)
	}
	return b.seqs[i] < b.seqs[j]
}

// sortedLocked returns the items that keep accepts by ReceivedAt, then
// arrival.
func (in *Inbox) sortedLocked(keep func(*item) bool) []*item {
	var out []*item
	for _, it := range in.items {
		if keep(it) {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ReceivedAt.Equal(out[j].ReceivedAt) {
			return out[i].ReceivedAt.Before(out[j].ReceivedAt)
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// ErrNotFound is returned for a key the inbox does not hold.
var ErrNotFound = errors.New("approval request not found: it may have left the inbox after it ended; refresh the list")

// ErrConfirmAlways is returned for "always" without confirmation.
var ErrConfirmAlways = errors.New(`"always" adds this command pattern to the gateway's permanent allowlist; ask the user to confirm that, then answer again`)

// ErrNoAnswerer is wrapped when Herald has no connection to the gateway.
var ErrNoAnswerer = errors.New("Herald is not connected to this request's gateway")

// Answer sends the user's choice for the request with key, from surface
// (a name such as "tray" or "window"). The first answer wins; any other
// gets an *AnsweredError. "always" needs confirmAlways. The request is
// resolved only once the gateway confirms; if the send fails the request
// is pending again with LastError set and a *SendError is returned.
func (in *Inbox) Answer(ctx context.Context, key, choice, surface string, confirmAlways bool) error {
	if r, ok := in.Get(key); ok && r.Kind.IsPrompt() {
		return in.answerPromptChoice(ctx, r, choice, surface)
	}
	if surface == "" {
		return errors.New("approval: Answer needs the name of the surface the user answered from")
	}
	var it *item
	var ans Answerer
	var err error
	var target Request // what to send to, read under the lock
	in.do(func(now time.Time) {
		if it, err = in.answerableLocked(key, choice, confirmAlways); err != nil {
			return
		}
		var ok bool
		if ans, ok = in.answerers(it.Gateway); !ok {
			err = fmt.Errorf("%w (%s); the request is still pending: reconnect the gateway, then answer again", ErrNoAnswerer, it.Gateway)
			return
		}
		it.State, it.LastError = StateAnswering, ""
		it.Outcome = Outcome{Choice: choice, Surface: surface, At: now}
		in.emitLocked(ChangeUpdated, it, now)
		target = it.Request
	})
	if err != nil {
		return err
	}
	resolved, serr := 1, error(nil)
	if target.Dialect == DialectServerRequest {
		serr = ans.RespondServerRequest(ctx, target.RequestID, choice)
		if errors.Is(serr, wire.ErrRequestSettled) {
			// request.answer said expired: settled elsewhere, not ours.
			resolved, serr = 0, nil
		}
	} else {
		resolved, serr = ans.RespondApproval(ctx, target.Session, choice, target.QueueID)
	}
	in.do(func(now time.Time) { err = in.settleLocked(it, resolved, serr, now) })
	return err
}

// waitingLocked is the request under key if it still waits for an answer
// (approvals and prompts alike); else the error that says why not. An
// answer of unknown outcome refuses a second one: it could reach whatever
// the gateway asks next.
func (in *Inbox) waitingLocked(key string) (*item, error) {
	it, ok := in.items[key]
	switch {
	case !ok:
		return nil, ErrNotFound
	case it.State == StateSentUnknown || it.State == StateOutcomeUnknown:
		return nil, &AnsweredError{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: it.Outcome.At, Unknown: true}
	case it.State == StateAnswering || it.State == StateResolved:
		return nil, &AnsweredError{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: it.Outcome.At, InFlight: it.State == StateAnswering}
	case it.State != StatePending:
		return nil, &EndedError{Kind: it.Kind, State: it.State, Outcome: it.Outcome}
	}
	return it, nil
}

// answerableLocked checks that an answer may be sent now.
func (in *Inbox) answerableLocked(key, choice string, confirmAlways bool) (*item, error) {
	it, err := in.waitingLocked(key)
	switch {
	case err != nil:
		return nil, err
	case it.Dialect == DialectServerRequest && it.RequestID == "":
		return nil, ErrNoRequestID
	}
	if choice != ChoiceDeny && slices.Contains(knownChoices, choice) {
		if err := denyOnlyErr(it.Request); err != nil {
			return nil, err
		}
	}
	switch {
	case !it.Offers(choice):
		return nil, fmt.Errorf("%q is not offered for this request; choose one of: %s", choice, strings.Join(it.Choices, ", "))
	case choice == ChoiceAlways && !confirmAlways:
		return nil, ErrConfirmAlways
	}
	switch first := in.fifoHeadLocked(it); {
	case first == it:
	case first.State == StateSentUnknown:
		return nil, fmt.Errorf("the answer to the earlier request from this session (%s) was sent and its outcome is unknown; this gateway applies answers in arrival order, so Herald sends nothing more in this session until it learns the outcome (answer in Hermes itself if it cannot wait)", first.DisplayCommand())
	case first.State == StateAnswering:
		return nil, fmt.Errorf("an answer to the earlier request from this session (%s) is on its way; this gateway applies answers in arrival order, so answer this one once that is confirmed", first.DisplayCommand())
	case first.Uncertain:
		return nil, fmt.Errorf("this gateway applies answers in arrival order: answer the earlier request from this session first (%s), or dismiss it if it is no longer waiting", first.DisplayCommand())
	default:
		return nil, fmt.Errorf("this gateway applies answers in arrival order: answer the earlier request from this session first (%s)", first.DisplayCommand())
	}
	return it, nil
}

// settleLocked applies the result of a send.
func (in *Inbox) settleLocked(it *item, resolved int, serr error, now time.Time) error {
	e := ending{StateResolved, Outcome{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface}}
	var err error
	late := !now.Before(it.ExpiresAt)
	switch {
	case it.reusedInFlight && (serr == nil || answerIsUnknown(serr)):
		it.hint, it.responded = nil, ""
		in.unknownLocked(it, errReusedInFlight, now)
		return &UnknownOutcomeError{Gateway: it.Gateway, Choice: it.Outcome.Choice, Kind: it.Kind, Err: errReusedInFlight}
	case it.hint != nil:
		e = *it.hint
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Sent: serr == nil, Cause: serr}
	case serr != nil && answerIsUnknown(serr) && it.responded != "":
		// The reply was lost, but the server's stream already said how
		// the request ended.
		choice := it.responded
		it.responded = ""
		in.unknownLocked(it, serr, now)
		in.learnedLocked(it, choice != ChoiceDeny, "the API server reported the answer "+VisibleLine(choice), now)
		if it.State != StateResolved {
			return &EndedError{Kind: it.Kind, State: it.State, Outcome: it.Outcome, Sent: true, Cause: serr}
		}
		return nil
	case serr != nil && answerIsUnknown(serr):
		in.unknownLocked(it, serr, now)
		return &UnknownOutcomeError{Gateway: it.Gateway, Choice: it.Outcome.Choice, Kind: it.Kind, Err: serr}
	case serr == nil && it.Dialect == DialectServerRequest && it.Uncertain:
		// A response frame's only confirmation is that it was written,
		// which says nothing when Herald does not know whether the
		// gateway still holds the request (restored after a restart).
		in.unknownLocked(it, errUnconfirmedWrite, now)
		return &UnknownOutcomeError{Gateway: it.Gateway, Choice: it.Outcome.Choice, Kind: it.Kind, Err: errUnconfirmedWrite}
	case serr != nil && late:
		e = ending{StateExpired, Outcome{Detail: "the answer could not be sent before the gateway's timeout"}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Cause: serr}
	case serr != nil:
		it.State, it.Outcome, it.LastError = StatePending, Outcome{}, scrub(serr.Error())
		in.emitLocked(ChangeUpdated, it, now)
		return &SendError{Gateway: it.Gateway, Choice: e.out.Choice, Err: serr}
	case resolved < 1 && late:
		e = ending{StateExpired, Outcome{Detail: "the gateway had nothing pending any more: it had timed out"}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Sent: true}
	case resolved < 1:
		e = ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere, Detail: "the gateway had nothing pending any more for this session"}}
		err = &EndedError{Kind: it.Kind, State: e.state, Outcome: e.out, Sent: true}
	}
	it.hint, it.responded = nil, ""
	it.State, it.Outcome, it.Uncertain = e.state, e.out, false
	it.Outcome.At = now
	in.emitLocked(ChangeUpdated, it, now)
	if it.Conflict != "" && it.State == StateResolved {
		in.endSiblingsLocked(it, now)
	}
	return err
}

// Dismiss ends an Uncertain pending request without sending anything, for
// a user who believes the gateway no longer waits for it.
func (in *Inbox) Dismiss(key, surface string) error {
	var err error
	in.do(func(now time.Time) {
		it, ok := in.items[key]
		switch {
		case !ok:
			err = ErrNotFound
		case it.State == StateSentUnknown:
			// The user settles the question of the outcome themselves
			// (they checked in Hermes): it stays unknown to Herald.
			it.State = StateOutcomeUnknown
			it.Outcome.Detail = fmt.Sprintf("outcome unknown: Herald's answer %q was sent before the link dropped; dismissed from %s before the gateway said whether it took effect", it.Outcome.Choice, VisibleLine(surface))
			it.Outcome.At = now
			in.emitLocked(ChangeUpdated, it, now)
		case it.State == StateAnswering || it.State == StateResolved:
			err = &AnsweredError{Choice: it.Outcome.Choice, Surface: it.Outcome.Surface, At: it.Outcome.At, InFlight: it.State == StateAnswering}
		case it.State != StatePending:
			err = &EndedError{Kind: it.Kind, State: it.State, Outcome: it.Outcome}
		case !it.Uncertain:
			err = errors.New("the gateway is known to be waiting for this request, so it cannot be dismissed; answer it instead (deny to refuse)")
		default:
			in.endLocked(it, ending{StateCancelled, Outcome{Reason: CancelDismissed, Surface: surface}}, now)
		}
	})
	return err
}

package approval

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
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
	// make the inbox hold, MaxArrivalsPerMinute how fast (defaults
	// DefaultMaxCommandBytes, DefaultMaxPending, DefaultMaxEnded,
	// DefaultMaxArrivalsPerMinute; see limits.go).
	MaxCommandBytes, MaxPending, MaxEnded, MaxArrivalsPerMinute int
	// SessionTitle returns the title a gateway gives a session (live id,
	// stored id), "" when none; each arrival records it as
	// Request.SessionTitle. It is called under the inbox's lock and must
	// not call the Inbox.
	SessionTitle func(gateway, session, stored string) string
	// fault, when set (tests), receives every broken rule of the
	// approval machine (machine.go): a move it does not have, a flag not
	// legal in a request's state.
	fault func(string)
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

type item struct {
	Request
	seq uint64
	// toolSeen: the event form's tool.complete has been matched to it.
	toolSeen bool
	// hint is what the gateway reported while an answer was in flight; it
	// decides the outcome once the send returns.
	hint *ending
	// responded is the choice the API server's approval.responded (or the
	// Herald bridge's poll) named while Herald's answer was in flight: if
	// the send then fails with an unknown outcome, the server has already
	// said how it ended. respondedHow names that evidence ("": the API
	// server's approval.responded).
	responded, respondedHow string
	// endedDuring is the run's end reported while Herald's answer was in
	// flight (runEndLocked): if the send then fails with an unknown
	// outcome, nothing more will come to settle it, so it ends unknown at
	// once.
	endedDuring *ending
	// awaitsResponded: Herald's id-less answer was confirmed by its reply,
	// and an API server's approval.responded for it may still come (see
	// respondedLocked): that report is Herald's own answer.
	awaitsResponded bool
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
	// crowded: Herald's id-less deny of it went out while two or more
	// approvals of its session waited at once, so the gateway may apply
	// it to another of them; the gateway's report of the command places
	// it (see order.go, "Two at once").
	crowded bool
	// missed: the gateway reported that crowded deny reaching another
	// approval (this names it) while its reply was still to come.
	missed string
	// offered is what the gateway offered before the rule of two at once
	// made it deny-only; the one left gets them back (crowdLocked).
	offered []string
	// recorded is what a restored request's choices were before the
	// restart made it deny-only; a listing by its id gives them back
	// (see listedLocked).
	recorded []string
	// cut, once the request ended, stands for its command when that was
	// cut to endedCommandBytes (see cutEndedLocked).
	cut *cutCommand
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
	out      []Change  // changes not yet notified
	draining bool
	auditErr string
	// unrecorded are the changes not yet taken for the audit log;
	// recordMu is held while a batch of them is written (see record).
	unrecorded []Change
	recordMu   sync.Mutex

	maxCommand, maxPending, maxEnded, maxPerMinute int
	title                                          func(gateway, session, stored string) string
	// rate counts each gateway's arrivals taken in this minute.
	rate map[string]*arrivals
	// live and ended count each gateway's requests by state, kept up to
	// date on every change (emitLocked), so bounds cost no scan.
	live, ended map[string]int
	floods      map[string]*Flood
	// order is the proof, per session of a FIFO gateway, of which
	// approval an id-less answer reaches (see order.go).
	order order
	fault func(string) // Options.fault

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
		fault:     opt.fault,
		stop:      make(chan struct{}),

		maxCommand:   opt.MaxCommandBytes,
		maxPending:   opt.MaxPending,
		maxEnded:     opt.MaxEnded,
		maxPerMinute: opt.MaxArrivalsPerMinute,
		rate:         map[string]*arrivals{},
		done:         make(chan struct{}),
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
	if in.maxPerMinute <= 0 {
		in.maxPerMinute = DefaultMaxArrivalsPerMinute
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
			in.toEnded(it, unknownAt(it, fmt.Sprintf("outcome unknown: Herald's answer %q %s, and the gateway's timeout passed without it saying whether the answer took effect", it.Outcome.Choice, sentHow(it))), now)
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
		in.settleFloodsLocked(now)
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
	for _, f := range in.floods {
		// A flood over the arrivals a minute ends with its minute.
		if f.Active && f.rateUntil.After(now) && (next.IsZero() || f.rateUntil.Before(next)) {
			next = f.rateUntil
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
	in.checkLocked(it)
	in.countLocked(it, kind == ChangeRemoved)
	in.queueLocked(Change{Kind: kind, At: now, Request: it.clone()})
	if kind != ChangeRemoved && !it.State.Live() {
		in.cutEndedLocked(it) // recorded whole above
	}
}

// queueLocked queues a change for the audit log (all but a removal) and
// for Notify.
func (in *Inbox) queueLocked(c Change) {
	if in.store != nil && c.Kind != ChangeRemoved {
		in.unrecorded = append(in.unrecorded, c)
	}
	in.out = append(in.out, c)
}

// flush records and notifies queued changes. It returns once every
// change queued before it is in the audit log, so what a caller changed
// (an answer, say) is in the history when the call returns, whoever
// notifies it. One caller drains the notifications at a time, so changes
// go out in order, each once it is recorded; a Notify that calls back
// into the inbox only queues more for the drainer.
func (in *Inbox) flush() {
	in.record()
	in.mu.Lock()
	if in.draining {
		in.mu.Unlock()
		return
	}
	in.draining = true
	for len(in.out) > 0 {
		batch := in.out
		in.out = nil
		in.mu.Unlock()
		in.record()
		if in.notify != nil {
			for _, c := range batch {
				in.notify(c)
			}
		}
		in.mu.Lock()
	}
	in.draining = false
	in.mu.Unlock()
}

// record writes the changes queued so far to the audit log, in order. It
// holds recordMu while writing, so it returns only once every change
// queued before it is written, also one another caller took. Notify is
// never called under recordMu, so a Notify calling back in does not wait
// on itself.
func (in *Inbox) record() {
	if in.store == nil {
		return
	}
	in.recordMu.Lock()
	defer in.recordMu.Unlock()
	in.mu.Lock()
	batch := in.unrecorded
	in.unrecorded = nil
	auditErr := in.auditErr
	in.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	for _, c := range batch {
		auditErr = ""
		if err := in.store.Record(entryFor(c)); err != nil {
			auditErr = fmt.Sprintf("the approval history could not be written (%s); approvals still work, but are not being logged", scrub(err.Error()))
		}
	}
	in.mu.Lock()
	in.auditErr = auditErr
	in.mu.Unlock()
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
func (in *Inbox) Snapshot() Snapshot { return in.snapshot(false) }

// LiveSnapshot is Snapshot with the live requests only (pending,
// answering, sent with an unknown outcome): what waits, without copying
// the ended ones the inbox keeps (the tray, redrawn on every change).
func (in *Inbox) LiveSnapshot() Snapshot { return in.snapshot(true) }

func (in *Inbox) snapshot(live bool) Snapshot {
	var s Snapshot
	var seqs []uint64
	in.do(func(now time.Time) {
		s.At, s.AuditError = now, in.auditErr
		if len(in.floods) > 0 {
			s.Floods = in.floodsLocked()
		}
		n := len(in.items)
		if live {
			n = 0
		}
		seqs = make([]uint64, 0, n)
		s.Requests = make([]Request, 0, n)
		for _, it := range in.items {
			if live && !it.State.Live() {
				continue
			}
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

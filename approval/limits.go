package approval

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// Bounds on what a gateway can make the inbox hold. Everything a gateway
// sends is hostile input: each of these has a clear, visible outcome
// rather than a silent cut.
const (
	// DefaultMaxCommandBytes is Options.MaxCommandBytes' default. A longer
	// command is kept truncated, marked Truncated, and accepts only deny.
	DefaultMaxCommandBytes = 64 << 10
	// DefaultMaxPending is Options.MaxPending's default: open requests
	// per gateway. Arrivals beyond it are refused and the gateway is
	// shown as flooding (see Flood).
	DefaultMaxPending = 256
	// DefaultMaxEnded is Options.MaxEnded's default: ended requests kept
	// in memory per gateway; the oldest leave first (the audit log keeps
	// them).
	DefaultMaxEnded = 2000
	// DefaultMaxArrivalsPerMinute is Options.MaxArrivalsPerMinute's
	// default: requests taken in per gateway within a minute. A gateway
	// (or a bridge route) that churns requests, asking and withdrawing
	// them so that few are open at once, is refused past it and shown as
	// flooding, as one past DefaultMaxPending is.
	DefaultMaxArrivalsPerMinute = 256
	// endedCommandBytes is how much of its command an ended request keeps
	// in memory (the audit log has the whole one, recorded as it ended):
	// 2,000 ended requests of 30 KB would otherwise hold 60 MB.
	endedCommandBytes = 1 << 10
	// MaxDescriptionBytes bounds a request's description.
	MaxDescriptionBytes = 4 << 10
	// MaxIDBytes bounds request, queue and session ids; a request with a
	// longer one fails on arrival (Herald could not answer it faithfully).
	MaxIDBytes = 256
	// MaxTitleBytes bounds the session title recorded with a request.
	MaxTitleBytes = 256
	// MaxPatternKeys bounds the pattern keys kept per request, each cut to
	// MaxIDBytes.
	MaxPatternKeys = 16
	// refusedCommandBytes is how much of a refused command the refusal
	// (and its audit entry) keeps.
	refusedCommandBytes = 1 << 10
	// maxPoisoned bounds the sessions remembered as having had an
	// arrival-order approval refused.
	maxPoisoned = 4096
)

// ChangeRefused is an arrival the inbox did not take in because its
// gateway already has Options.MaxPending open requests. The request in
// the Change is how it arrived (failed, with the reason); the gateway
// still waits for it and will time it out, so the command does not run.
const ChangeRefused ChangeKind = "refused"

// Flood describes a gateway that sent more open approvals than the inbox
// takes (Options.MaxPending).
type Flood struct {
	Gateway string    `json:"gateway"`
	Limit   int       `json:"limit"`   // open requests taken in per gateway
	Refused int       `json:"refused"` // arrivals refused so far
	Since   time.Time `json:"since"`   // first refusal
	Last    time.Time `json:"last"`    // latest refusal
	// Active is true while the gateway is still at the limit.
	Active bool `json:"active"`
	// LastCommand is the beginning of the latest refused command, raw.
	LastCommand string `json:"last_command,omitempty"`
	// Bound, when set, is the bound of Herald's link to the gateway that
	// the latest refusal hit (its queue, or its open server requests),
	// rather than the inbox's Limit.
	Bound string `json:"bound,omitempty"`
	// PerMinute, when set, is the arrivals a minute that the latest
	// refusal exceeded (Options.MaxArrivalsPerMinute), rather than
	// Limit open ones.
	PerMinute int `json:"per_minute,omitempty"`
	// rateUntil: the flood stays active until then (the end of the
	// minute whose arrivals went over PerMinute).
	rateUntil time.Time
}

// Message says what happened and what to do, for every surface.
func (f Flood) Message() string {
	if f.Bound != "" {
		return fmt.Sprintf("gateway %s flooded Herald at %s: %d requests were refused (latest: %s; not shown, not answered: the gateway times them out and does not run them). Check what the agent is doing", f.Gateway, f.Since.Format("15:04:05"), f.Refused, f.Bound)
	}
	if f.Active && f.PerMinute > 0 {
		return fmt.Sprintf("gateway %s is flooding Herald: it sent more than %d requests within a minute, the most Herald takes; %d were refused (not shown, not answered: the gateway times them out and does not run them). Check what the agent is doing", f.Gateway, f.PerMinute, f.Refused)
	}
	if f.Active {
		return fmt.Sprintf("gateway %s is flooding Herald: it has %d approvals open, the most Herald takes; %d more were refused (not shown, not answered: the gateway times them out and does not run them). Answer or deny the open ones, and check what the agent is doing", f.Gateway, f.Limit, f.Refused)
	}
	return fmt.Sprintf("gateway %s flooded Herald at %s: %d approvals over the limit of %d were refused (not shown, not answered: the gateway timed them out and did not run them)", f.Gateway, f.Since.Format("15:04:05"), f.Refused, f.Limit)
}

// TruncatedError is returned by Answer for an approving choice on a
// request whose command was too large to keep whole.
type TruncatedError struct{ Size, Kept int }

// Error says why and what to do.
func (e *TruncatedError) Error() string {
	return fmt.Sprintf("this command is %d bytes, larger than the %d Herald keeps, so Herald cannot show all of it and will not approve it; deny it, or review and answer it in Hermes itself", e.Size, e.Kept)
}

// ErrCommandUnseen is returned by Answer for an approving choice on an
// approval whose command the gateway never sent to Herald.
var ErrCommandUnseen = errors.New("Herald was not shown the command this approval is for, so it will not approve it; deny it here, or review and answer it in the client that started the session")

// ConflictError is returned by Answer for an approving choice on a
// request whose Conflict is set.
type ConflictError struct{ Why string }

// Error says why and what to do.
func (e *ConflictError) Error() string {
	return e.Why + "; Herald will not approve it: deny it, or answer it in Hermes itself"
}

// boundLocked cuts what the gateway sent to the inbox's bounds. It
// returns a reason when the request cannot be answered faithfully.
func (in *Inbox) boundLocked(r *Request) (why string) {
	if cmd, cut := Truncate(r.Command, in.maxCommand); cut {
		r.CommandBytes, r.Command, r.Truncated = len(r.Command), cmd, true
	}
	if d, cut := Truncate(r.Description, MaxDescriptionBytes); cut {
		r.Description = d + "… (description truncated)"
	}
	// The keys are the caller's (often a decoded event every subscriber
	// shares): cut a copy, never the slice it holds.
	if keys := r.PatternKeys; keys != nil {
		r.PatternKeys = make([]string, min(len(keys), MaxPatternKeys))
		for i := range r.PatternKeys {
			r.PatternKeys[i], _ = Truncate(keys[i], MaxIDBytes)
		}
	}
	for _, id := range []*string{&r.RequestID, &r.QueueID, &r.Session, &r.StoredSession, &r.Epoch} {
		if len(*id) > MaxIDBytes {
			*id, _ = Truncate(*id, MaxIDBytes)
			why = fmt.Sprintf("it carries an id longer than %d bytes", MaxIDBytes)
		}
	}
	return why
}

// titleLocked records the title r's session has now (Options.SessionTitle)
// as its SessionTitle, within MaxTitleBytes.
func (in *Inbox) titleLocked(r *Request) {
	if in.title == nil || (r.Session == "" && r.StoredSession == "") {
		return
	}
	r.SessionTitle, _ = Truncate(strings.TrimSpace(in.title(r.Gateway, r.Session, r.StoredSession)), MaxTitleBytes)
}

// liveLocked counts a gateway's open requests.
func (in *Inbox) liveLocked(gateway string) int { return in.live[gateway] }

// countLocked brings it's place in the live and ended counts up to date
// with its state (or takes it out when removed).
func (in *Inbox) countLocked(it *item, removed bool) {
	want := countedEnded
	switch {
	case removed:
		want = countedNone
	case it.State.Live():
		want = countedLive
	}
	if want == it.counted {
		return
	}
	switch it.counted {
	case countedLive:
		in.decLocked(in.live, it.Gateway)
	case countedEnded:
		in.decLocked(in.ended, it.Gateway)
	}
	switch want {
	case countedLive:
		in.live[it.Gateway]++
	case countedEnded:
		in.ended[it.Gateway]++
	}
	it.counted = want
}

func (in *Inbox) decLocked(m map[string]int, gw string) {
	if m[gw]--; m[gw] <= 0 {
		delete(m, gw)
	}
}

// arrivals counts a gateway's requests taken in since start, a minute at
// most.
type arrivals struct {
	start time.Time
	n     int
}

// overLimitLocked says why the gateway's next arrival is refused ("" when
// it is taken in, and then counts it toward this minute's arrivals): it
// already has maxPending requests open, or maxPerMinute arrived within
// the minute.
func (in *Inbox) overLimitLocked(gw string, now time.Time) string {
	if in.liveLocked(gw) >= in.maxPending {
		return fmt.Sprintf("gateway %s already has %d approvals open (Herald's limit)", gw, in.maxPending)
	}
	a := in.rate[gw]
	if a == nil || now.Sub(a.start) >= time.Minute || now.Before(a.start) {
		if a == nil {
			a = &arrivals{}
			in.rate[gw] = a
		}
		a.start, a.n = now, 0
	}
	if a.n >= in.maxPerMinute {
		return fmt.Sprintf("gateway %s sent more than %d requests within a minute (Herald's limit)", gw, in.maxPerMinute)
	}
	a.n++
	return ""
}

// refuseLocked records an arrival over the gateway's limit (over says
// which, from overLimitLocked).
func (in *Inbox) refuseLocked(r Request, over string, now time.Time) {
	// The gateway answers this form in arrival order: once it holds a
	// request Herald never showed, a later answer could reach it.
	poison := idless(r)
	in.refuseNLocked(r, 1, poison, "refused: "+over+"; not shown or answered, so the gateway times it out and does not run it", "", now)
	f := in.floods[r.Gateway]
	if a := in.rate[r.Gateway]; a != nil && a.n >= in.maxPerMinute && in.liveLocked(r.Gateway) < in.maxPending {
		f.PerMinute, f.rateUntil = in.maxPerMinute, a.start.Add(time.Minute)
	} else {
		f.PerMinute = 0
	}
}

// refusedLocked records requests that the gateway's transport refused
// for one of its own bounds (a wire.Refused event): counted into the
// gateway's flood and logged, one audit entry per event.
func (in *Inbox) refusedLocked(ev wire.Event, now time.Time) {
	p, ok := ev.Data.(*wire.RefusedPayload)
	if !ok || p.Count <= 0 {
		return
	}
	r := Request{
		Kind: KindApproval, Gateway: ev.Gateway, Session: ev.Session, StoredSession: ev.StoredSession,
		Command: p.LastCommand, ReceivedAt: ev.ReceivedAt, Dialect: DialectServerRequest, Epoch: ev.Epoch,
	}
	if strings.HasSuffix(p.Method, ".request") {
		r.Dialect = DialectEvent // approval.request, clarify.request, ...
	}
	if k := wire.PromptKind(p.Method); k != "" {
		r.Kind = Kind(k)
	}
	if r.ReceivedAt.IsZero() {
		r.ReceivedAt = now
	}
	in.boundLocked(&r)
	in.titleLocked(&r)
	r.Key = in.evKey(r.Gateway + "/refused")
	if p.Unkeyed && p.AllSessions {
		// Refused in sessions too many to name: every session of this
		// gateway that is answered in arrival order is affected.
		in.order.refuseAll(r.Gateway)
	}
	what := "requests were"
	if p.Count == 1 {
		what = "request was"
	}
	why := fmt.Sprintf("refused: %d %s not taken in: %s; not shown or answered, so the gateway times them out and does not run them", p.Count, what, p.Reason)
	in.refuseNLocked(r, p.Count, p.Unkeyed, why, p.Reason, now)
}

// refuseNLocked counts n refused requests, r standing for them, into the
// gateway's flood and reports r, failed with why. poison: one of them was
// an approval the gateway answers in arrival order, so later approvals of
// its session are deny-only.
func (in *Inbox) refuseNLocked(r Request, n int, poison bool, why, bound string, now time.Time) {
	f := in.floods[r.Gateway]
	if f == nil || !f.Active {
		if f == nil {
			f = &Flood{Gateway: r.Gateway}
			in.floods[r.Gateway] = f
		}
		f.Since, f.Active = now, true
	}
	f.Limit = in.maxPending
	f.Refused += n
	f.Bound = bound
	f.Last = now
	last, _ := Truncate(r.Command, 200)
	f.LastCommand = strings.Clone(last) // not a window on the whole command
	if poison {
		// Bounded: past maxPoisoned sessions the whole gateway's
		// arrival-order approvals are deny-only.
		in.order.refuse(eventNS(r), r.Gateway)
	}
	// The audit log keeps the beginning of a refused command: it was
	// neither shown nor answered, and masking 20 KB of it for the log
	// would make a flood cost milliseconds per request.
	if cmd, cut := Truncate(r.Command, refusedCommandBytes); cut {
		if !r.Truncated {
			r.CommandBytes = len(r.Command)
		}
		// A copy: the log's batch must not keep the whole command alive.
		r.Command, r.Truncated = strings.Clone(cmd), true
	}
	in.queueLocked(Change{Kind: ChangeRefused, At: now, Request: refusedRecord(r, why, now).clone(), Refused: n})
}

// settleFloodsLocked marks floods over once their gateway is below the
// limits again: fewer than maxPending open, and the minute that went over
// maxPerMinute past.
func (in *Inbox) settleFloodsLocked(now time.Time) {
	for gw, f := range in.floods {
		if f.Active && in.liveLocked(gw) < in.maxPending && !now.Before(f.rateUntil) {
			f.Active = false
		}
	}
}

// cutCommand stands for the whole command of an ended request whose
// command was cut: its digest, and its CommandBytes and Truncated before.
type cutCommand struct {
	sum       [sha256.Size]byte
	bytes     int
	truncated bool
}

// cutEndedLocked cuts the command an ended request keeps in memory to
// endedCommandBytes, marked as truncated with its size, as a command
// over MaxCommandBytes is (the audit log recorded it whole as it ended).
// Its digest stays, so a re-delivery of the same request is still
// recognised (sameRequest).
func (in *Inbox) cutEndedLocked(it *item) {
	if it.cut != nil || len(it.Command) <= endedCommandBytes {
		return
	}
	it.cut = &cutCommand{sum: sha256.Sum256([]byte(it.Command)), bytes: it.CommandBytes, truncated: it.Truncated}
	if !it.Truncated {
		it.CommandBytes = len(it.Command)
	}
	cut, _ := Truncate(it.Command, endedCommandBytes)
	it.Command = strings.Clone(cut) // a copy: the whole command is let go
	it.Truncated = true
}

// commandIs reports whether the request's command is cmd (compared by
// digest once it was cut).
func (it *item) commandIs(cmd string) bool {
	if it.cut == nil {
		return it.Command == cmd
	}
	return sha256.Sum256([]byte(cmd)) == it.cut.sum
}

// floodsLocked lists the floods by gateway.
func (in *Inbox) floodsLocked() []Flood {
	out := make([]Flood, 0, len(in.floods))
	for _, f := range in.floods {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Gateway < out[j].Gateway })
	return out
}

// capEndedLocked forgets the oldest ended requests of any gateway that
// has more than MaxEnded, so a flood of short-lived requests cannot grow
// memory (and every view build) without bound.
func (in *Inbox) capEndedLocked(ended map[string][]*item, now time.Time) {
	for _, list := range ended {
		if len(list) <= in.maxEnded {
			continue
		}
		sort.Slice(list, func(i, j int) bool { return list[i].seq < list[j].seq })
		for _, it := range list[:len(list)-in.maxEnded] {
			delete(in.items, it.Key)
			in.emitLocked(ChangeRemoved, it, now)
		}
	}
}

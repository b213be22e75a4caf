package app

import (
	"fmt"
	"math"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// Bounds on Hermes notices (every gateway string is hostile input).
const (
	// maxNotices is how many notices may be up at once; a new one
	// withdraws the oldest beyond it.
	maxNotices = 16
	// noticeTextMax bounds a notice's text in bytes.
	noticeTextMax = 300
	// noticeKeyMax bounds a notice's key; longer keys are cut.
	noticeKeyMax = 128
	// defaultNoticeTTL is the life of a ttl notice that names none.
	defaultNoticeTTL = 8 * time.Second
	// minNoticeTTL and maxNoticeTTL clamp ttl_ms.
	minNoticeTTL = time.Second
	maxNoticeTTL = 24 * time.Hour
)

// notices turns Hermes' own notices (notification.show / .clear) into
// native notifications: level → urgency, one per gateway and key (a new
// notice with the same key replaces the old), withdrawn on
// notification.clear and when a ttl notice's time is up, none shown while
// notifications are paused. See backend/hermestest/NOTIFICATIONS.md.
type notices struct {
	clk clock.Clock

	platformGate
	up    map[string]*shownNotice // by gateway + "\x00" + key
	order []string                // keys of up, oldest first
	seq   uint64
}

type shownNotice struct {
	id    string // the platform notification id
	gen   uint64
	timer clock.Timer
	done  chan struct{} // closed when the notice goes (releases expire)
}

func newNotices(clk clock.Clock) *notices {
	return &notices{clk: clk, up: map[string]*shownNotice{}}
}

// count is how many notices are up (tests).
func (n *notices) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.up)
}

// event handles one gateway event; anything but a notice is ignored.
func (n *notices) event(ev wire.Event) {
	switch d := ev.Data.(type) {
	case *wire.NotificationPayload:
		if ev.Replayed && d.Kind == wire.NoticeTTL {
			// Replayed after a reconnect: a ttl notice is a passing
			// remark whose time has likely run out; sticky ones and
			// clears still apply.
			return
		}
		n.show(ev.Gateway, d)
	case *wire.NotificationClearPayload:
		n.clear(ev.Gateway, d.Key)
	}
}

func noticeKey(gw, key string) string {
	key, _ = approval.Truncate(key, noticeKeyMax)
	return gw + "\x00" + key
}

// Urgency of a notice level: errors and warnings normal, the rest low. A
// notice waits for no answer, so it is never critical (notePolicy).
func noticeUrgency(level string) Urgency {
	switch wire.NormalLevel(level) {
	case wire.NoticeError, wire.NoticeWarn:
		return UrgencyNormal
	}
	return UrgencyLow
}

func noticeTitle(gw, level string) string {
	what := map[string]string{wire.NoticeError: "Hermes error", wire.NoticeWarn: "Hermes warning"}[wire.NormalLevel(level)]
	if what == "" {
		what = "Hermes"
	}
	return what + " on " + approval.VisibleLine(gw)
}

// noticeTTL is how long a notice stays up; 0 means until cleared. Hermes
// honours ttl_ms only for kind "ttl".
func noticeTTL(p *wire.NotificationPayload) time.Duration {
	if p.Kind != wire.NoticeTTL {
		return 0
	}
	if p.TTLMillis == nil || math.IsNaN(*p.TTLMillis) || *p.TTLMillis <= 0 {
		return defaultNoticeTTL
	}
	ms := math.Min(*p.TTLMillis, float64(maxNoticeTTL/time.Millisecond))
	return max(time.Duration(ms)*time.Millisecond, minNoticeTTL)
}

func (n *notices) show(gw string, p *wire.NotificationPayload) {
	n.mu.Lock()
	defer n.mu.Unlock()
	plat := n.platform
	if plat == nil {
		return
	}
	n.seq++
	k := p.DedupeKey()
	if k == "" {
		k = fmt.Sprintf("\x00one-off-%d", n.seq) // never replaced or cleared by key
	}
	key := noticeKey(gw, k)
	if old := n.up[key]; old != nil {
		// Replaced: the old notice goes, whatever happens to the new one.
		n.removeLocked(key)
		plat.Withdraw(old.id)
	}
	if n.paused {
		return
	}
	for len(n.order) >= maxNotices {
		oldest := n.order[0]
		id := n.up[oldest].id
		n.removeLocked(oldest)
		plat.Withdraw(id)
	}
	text, cut := approval.Truncate(p.Text, noticeTextMax)
	body := approval.Visible(text)
	if cut {
		body += "…"
	}
	s := &shownNotice{id: fmt.Sprintf("hermes-notice:%s:%d", service.ShortKey(key), n.seq), gen: n.seq, done: make(chan struct{})}
	n.up[key] = s
	n.order = append(n.order, key)
	if ttl := noticeTTL(p); ttl > 0 {
		s.timer = n.clk.NewTimer(ttl)
		go n.expire(key, s)
	}
	plat.Notify(Notification{ID: s.id, Kind: NoteHermes, Gateway: gw, Title: noticeTitle(gw, p.Level), Body: body, Urgency: noticeUrgency(p.Level)})
}

// expire withdraws a ttl notice when its time is up, unless it was
// replaced or cleared first (its timer is then stopped and never fires;
// the generation check covers a fire racing the stop).
func (n *notices) expire(key string, want *shownNotice) {
	select {
	case <-want.timer.C():
	case <-want.done:
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.up[key]; s != want {
		return
	}
	s := want
	n.removeLocked(key)
	if n.platform != nil {
		n.platform.Withdraw(s.id)
	}
}

func (n *notices) clear(gw, key string) {
	if key == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	k := noticeKey(gw, key)
	s := n.up[k]
	if s == nil {
		return
	}
	n.removeLocked(k)
	if n.platform != nil {
		n.platform.Withdraw(s.id)
	}
}

// close forgets every notice and releases their timers.
func (n *notices) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k := range n.up {
		n.removeLocked(k)
	}
}

// removeLocked forgets a notice, stops its timer and releases its expire
// goroutine.
func (n *notices) removeLocked(key string) {
	s := n.up[key]
	delete(n.up, key)
	for i, k := range n.order {
		if k == key {
			n.order = append(n.order[:i], n.order[i+1:]...)
			break
		}
	}
	if s != nil {
		close(s.done)
		if s.timer != nil {
			s.timer.Stop()
		}
	}
}

package wire

import "strings"

// Hermes' own out-of-band notices (credits running low, "still starting
// the agent", ...). The gateway sends them as events:
//
//	notification.show  {text, level, kind, ttl_ms, key, id}
//	notification.clear {key}
//
// (tui_gateway/contracts/events.py: NotificationShowPayload,
// NotificationClearPayload; see backend/hermestest/NOTIFICATIONS.md).
// "notification" is accepted as another name for notification.show.
const (
	NotificationShow   = "notification.show"
	NotificationClear  = "notification.clear"
	NotificationLegacy = "notification"
)

// Notice levels as Hermes sends them.
const (
	NoticeInfo    = "info"
	NoticeWarn    = "warn"
	NoticeError   = "error"
	NoticeSuccess = "success"
)

// Notice kinds: a sticky notice stays until cleared, a ttl notice goes
// after TTLMillis, an agent notice is a status line about the agent.
const (
	NoticeSticky = "sticky"
	NoticeTTL    = "ttl"
	NoticeAgent  = "agent"
)

// NotificationPayload is notification.show (or notification).
type NotificationPayload struct {
	Text  string `json:"text"`
	Level string `json:"level"`
	Kind  string `json:"kind"`
	// TTLMillis is ttl_ms: how long a ttl notice lives; Hermes honours it
	// only when Kind is "ttl". null (nil) otherwise.
	TTLMillis *float64 `json:"ttl_ms,omitempty"`
	// Key names the notice for replacement and notification.clear.
	Key string `json:"key,omitempty"`
	ID  string `json:"id,omitempty"`
}

// NotificationClearPayload is notification.clear.
type NotificationClearPayload struct {
	Key string `json:"key"`
}

// IsNotification reports whether kind is a Hermes notice (show or its
// other name).
func IsNotification(kind string) bool {
	return kind == NotificationShow || kind == NotificationLegacy
}

// NormalLevel maps a notice level to one of info, warn, error, success;
// anything unknown is info. "warning" and "critical" are read as warn and
// error.
func NormalLevel(level string) string {
	switch strings.ToLower(strings.TrimSpace(level)) {
	case NoticeWarn, "warning":
		return NoticeWarn
	case NoticeError, "critical", "fatal":
		return NoticeError
	case NoticeSuccess, "ok":
		return NoticeSuccess
	}
	return NoticeInfo
}

// DedupeKey is the name a notice is replaced and cleared by: its key, or
// its id when it has no key; "" when it has neither (a one-off).
func (p *NotificationPayload) DedupeKey() string {
	if p.Key != "" {
		return p.Key
	}
	return p.ID
}

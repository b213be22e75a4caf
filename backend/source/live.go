package source

import "time"

// Event kinds Herald itself generates about session ownership.
const (
	// EventElsewhere: another client took a followed session's live events.
	EventElsewhere = "herald.session.elsewhere"
	// EventFollowed: Herald now receives a session's live events.
	EventFollowed = "herald.session.followed"
)

// Live session statuses as Hermes reports them.
const (
	LiveIdle     = "idle"
	LiveWorking  = "working"
	LiveWaiting  = "waiting"
	LiveStarting = "starting"
)

// LiveSession is one live session on a server, as its listing shows it,
// with what Herald knows about following it.
type LiveSession struct {
	ID           string    `json:"id"`
	Key          string    `json:"key,omitempty"` // stored id, for resuming it
	Title        string    `json:"title,omitempty"`
	Status       string    `json:"status"` // idle, working, waiting, starting
	Preview      string    `json:"preview,omitempty"`
	MessageCount int       `json:"message_count"`
	LastActive   time.Time `json:"last_active,omitzero"`
	// StartedAt is when it started (the listing's started_at).
	StartedAt time.Time `json:"started_at,omitzero"`
	// FirstPrompt is its first prompt, when the gateway gives it (its
	// messages' first user message), bounded: with Title and StartedAt it
	// names the session (approval.Naming).
	FirstPrompt string `json:"first_prompt,omitempty"`
	// Followed: Herald attached this session.
	Followed bool `json:"followed"`
	// Elsewhere: Herald followed it, and another client has taken its
	// live events since.
	Elsewhere bool `json:"elsewhere,omitempty"`
}

// Running reports whether a turn is under way.
func (l LiveSession) Running() bool {
	return l.Status == LiveWorking || l.Status == LiveWaiting || l.Status == LiveStarting || l.Status == "running"
}

// Discovery is one listing of a server's live sessions.
type Discovery struct {
	Gateway  string        `json:"gateway"`
	At       time.Time     `json:"at"`
	Sessions []LiveSession `json:"sessions"`
	// Err says why the listing failed (the previous one still stands).
	Err string `json:"error,omitempty"`
	// Unsupported: the server cannot list its sessions.
	Unsupported bool `json:"unsupported,omitempty"`
	// Delivery is to whom the server sends a session's events, as its
	// connection showed.
	Delivery Delivery `json:"delivery,omitempty"`
}

// Delivery says to whom a server sends a session's events.
type Delivery string

// Deliveries.
const (
	// DeliveryUnknown: not connected yet.
	DeliveryUnknown Delivery = ""
	// DeliveryOneClient: each session's events go to one client at a
	// time, the last that resumed it or submitted to it.
	DeliveryOneClient Delivery = "one_client"
	// DeliveryFanOut: each session's events go to every attached client.
	DeliveryFanOut Delivery = "fan_out"
)

// Describe says it for people, naming the behaviour.
func (d Delivery) Describe() string {
	switch d {
	case DeliveryFanOut:
		return "this gateway sends each session's events to every client that follows it"
	case DeliveryOneClient:
		return "this gateway sends each session's events to one client at a time"
	}
	return "not known until Herald is connected"
}

// ElsewherePayload is the payload of EventElsewhere.
type ElsewherePayload struct {
	Key    string `json:"key,omitempty"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
	// Running (EventFollowed): a turn was under way when Herald attached,
	// so an approval may already wait there unseen.
	Running bool `json:"running,omitempty"`
}

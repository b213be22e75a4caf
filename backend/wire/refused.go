package wire

// Refused is a Herald event: a transport refused requests because one of
// its bounds was reached (its queue was full, or the gateway had more
// server requests open than Herald tracks). They were not delivered and
// Herald does not answer them: the gateway times them out and does not
// run them. Consumers show them as a flood; refusals of one session that
// queue up together are merged into one event (Count).
const Refused = "herald.refused"

// RefusedPayload says what a Refused event stands for.
type RefusedPayload struct {
	// Method is the refused requests' kind: an approval event or server
	// request method, or a prompt's.
	Method string `json:"method"`
	// Count is how many requests this event stands for.
	Count int `json:"count"`
	// Reason names the bound that was reached, for people.
	Reason string `json:"reason"`
	// LastCommand is the beginning of the latest refused approval's
	// command, raw; LastBytes the size of its payload.
	LastCommand string `json:"last_command,omitempty"`
	LastBytes   int    `json:"last_bytes,omitempty"`
	// Unkeyed: at least one was an approval event without an id of its
	// own, which the gateway answers in arrival order.
	Unkeyed bool `json:"unkeyed,omitempty"`
	// AllSessions: too many sessions were refused at once to name each;
	// this event stands for refusals in any session of the gateway.
	AllSessions bool `json:"all_sessions,omitempty"`
}

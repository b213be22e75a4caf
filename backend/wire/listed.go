package wire

import "encoding/json"

// ApprovalsListed is the kind of the event a source emits when a server
// said, on demand, which approvals of a session (an API server: of a run)
// still wait, each by its own id: a 0.21.3+ gateway's approval.pending
// after a (re)attach, an API server's run status after an answer of
// unknown outcome. The approval inbox reconciles the session's requests
// with it (approval/listed.go); it never creates a request. Payload: a
// Listing.
const ApprovalsListed = "herald.approvals.listed"

// Bounds on a listing, applied by the source that builds it (NewListing)
// and again by the inbox: entries, and the bytes of an id or a command (a
// longer one is passed on empty, so it matches nothing), and choices (more
// are dropped).
const (
	MaxListed        = 512
	MaxListedID      = 1 << 10
	MaxListedCommand = 1 << 20
	MaxListedChoices = 8
)

// Listing is an ApprovalsListed payload.
type Listing struct {
	// SessionID is the session (run) listed; empty means the event's.
	SessionID string `json:"session_id"`
	// Complete: every approval waiting in the session is listed, so one
	// not listed does not wait. False when the list was cut short.
	Complete  bool             `json:"complete"`
	Approvals []ListedApproval `json:"approvals"`
}

// ListedApproval is one waiting approval: its server-request id (ID)
// and/or its queue id (RequestID), its command and the choices offered.
type ListedApproval struct {
	ID        string   `json:"id,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
	Command   string   `json:"command"`
	Choices   []string `json:"choices,omitempty"`
}

// NewListing bounds what a server listed for session: at most MaxListed
// entries (Complete turns false when more were cut), each bounded as
// ListedApproval.bounded says.
func NewListing(session string, complete bool, all []ListedApproval) Listing {
	if len(all) > MaxListed {
		all, complete = all[:MaxListed], false
	}
	out := make([]ListedApproval, 0, len(all))
	for _, a := range all {
		out = append(out, a.bounded())
	}
	return Listing{SessionID: session, Complete: complete, Approvals: out}
}

// bounded is a with an id or command past its bound empty and choices
// past MaxListedChoices dropped.
func (a ListedApproval) bounded() ListedApproval {
	if len(a.ID) > MaxListedID {
		a.ID = ""
	}
	if len(a.RequestID) > MaxListedID {
		a.RequestID = ""
	}
	if len(a.Command) > MaxListedCommand {
		a.Command = ""
	}
	if len(a.Choices) > MaxListedChoices {
		a.Choices = nil
	}
	return a
}

// ListedID is a listed id as a string (a number's digits), empty when
// absent or past MaxListedID.
func ListedID(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" || len(raw) > MaxListedID+2 {
		return ""
	}
	return IDString(raw)
}

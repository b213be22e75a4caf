package app

import (
	"time"

	"github.com/herald-desktop/herald/service"
)

// An API server's stored sessions on its card and in the quick prompt
// (see service's stored.go). The window asks for them while it is open,
// every few seconds; nothing asks while it is closed.

// storedPreviewMax bounds what the card shows of a session's first
// message.
const storedPreviewMax = 160

// StoredSessionsUI is one server's stored sessions for the window, every
// gateway string made safe.
type StoredSessionsUI struct {
	Gateway  string            `json:"gateway"`
	Sessions []StoredSessionUI `json:"sessions"`
	// More: the server has more sessions than were listed.
	More bool `json:"more,omitempty"`
	// Note says once, in plain words, what a turn sent to these sessions
	// cannot do on this server (once Herald learned it).
	Note string `json:"note,omitempty"`
}

// StoredSessionUI is one stored session.
type StoredSessionUI struct {
	// ID is the session's id as the server gave it: the quick prompt
	// sends it back; ShownID is it made safe, for showing.
	ID      string `json:"id"`
	ShownID string `json:"shown_id"`
	// Name is its one name (title, else the start of its first message).
	Name       string    `json:"name"`
	Preview    string    `json:"preview,omitempty"`
	Messages   int       `json:"messages"`
	LastActive time.Time `json:"last_active,omitzero"`
	// Turn is the run id of a turn Herald sent to it that is under way.
	Turn string `json:"turn,omitempty"`
}

// StoredSessions lists a server's stored sessions (its card, the quick
// prompt's targets).
func (a *App) StoredSessions(gatewayName string) (StoredSessionsUI, error) {
	ctx, cancel := a.callCtx()
	defer cancel()
	v, err := a.svc.StoredSessions(ctx, gatewayName)
	if err != nil {
		return StoredSessionsUI{Gateway: visible(gatewayName), Sessions: []StoredSessionUI{}}, visibleErr(err)
	}
	return storedUI(v), nil
}

func storedUI(v service.StoredSessionsView) StoredSessionsUI {
	out := StoredSessionsUI{Gateway: visible(v.Gateway), More: v.More, Note: visible(v.Note), Sessions: make([]StoredSessionUI, 0, len(v.Sessions))}
	for _, s := range v.Sessions {
		out.Sessions = append(out.Sessions, StoredSessionUI{
			ID: s.ID, ShownID: clipLine(s.ID, liveTitleMax), Name: clipLine(s.Name, liveTitleMax),
			Preview: clipLine(s.Preview, storedPreviewMax), Messages: s.MessageCount, LastActive: s.LastActive, Turn: s.Turn,
		})
	}
	return out
}

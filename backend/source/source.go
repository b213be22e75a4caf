// Package source is the transport-neutral contract between Herald's
// transports and everything above them.
//
// A transport (the dashboard gateway's WebSocket in backend/gateway, the
// API server's HTTP and SSE in backend/apiserver) is one package that
// implements Source and registers a Driver (see Register), plus the
// optional capabilities its server offers (capabilities.go: following
// live sessions, taking prompts, stopping and starting runs). It reports
// what it sees as wire.Events in order and its channel as a Status, in the
// same terms as every other transport. What they all do alike is written
// once here: the reconnect loop (Supervisor: the transport supplies one
// connect attempt and classifies its errors), the HTTP client
// (NewHTTPClient: never follows a redirect), the answer path
// (AnswerOutcome: once written, unconfirmed is unknown), the delivery
// (EventQueue: approvals ahead of streamed text), the Choices and the
// advice on network failures (Peer.DescribeNetErr).
//
// Who may import whom: source imports only backend/wire,
// backend/clock and backend/addr (for the one HTTP client every
// transport uses, NewHTTPClient). Transports import source and never each other; nothing
// in source imports a transport. Above backend/, only service opens
// sources (through the registry) and asks for capabilities (by type
// assertion); nothing names a transport package but backend/transports,
// the one blank import that registers them all.
//
// A new transport goes in a package of its own under backend/, with a
// fake server beside it (for tests), one Register call in its init
// function and one import line in backend/transports. Its Driver says
// all that surfaces need to know of it (words.go): what its
// conversations are called and how a stopped one reads (Words), what
// surfaces may offer on it (Offers), its command-line flag (Flag); no
// surface compares kinds.
package source

import (
	"context"
	"errors"
)

// Kind names a transport ("ws", "api"), as settings and flags spell it.
type Kind string

func (k Kind) String() string { return string(k) }

// Source is one way Herald follows Hermes. Every surface reaches every
// transport through it (via the service): the same status, answers and
// follow/reconnect controls.
type Source interface {
	// Name identifies the source in events, status and settings.
	Name() string
	// Kind is its transport.
	Kind() Kind
	// Run follows the server until ctx ends, delivering events and
	// status changes to the callbacks given when it was opened.
	Run(ctx context.Context) error
	// Status is its connection status.
	Status() Status
	// ReconnectNow cuts backoff waits short and retries a refused
	// sign-in at once.
	ReconnectNow()
	// Follow follows a session or run by id (resumed once connected if
	// the transport needs a connection to follow).
	Follow(ctx context.Context, id string) error
	// Unfollow stops following it; the session or run itself goes on.
	Unfollow(id string)
	// RespondApproval answers the approval of a session (or run); it
	// returns how many pending approvals the server resolved (0: nothing
	// was pending any more).
	RespondApproval(ctx context.Context, session, choice, requestID string) (int, error)
	// RespondServerRequest answers a server request by its id.
	RespondServerRequest(ctx context.Context, requestID, choice string) error
}

// ErrUnauthorized is what a transport's refused-credentials errors match
// (errors.Is), so surfaces can say how to sign in without naming the
// transport.
var ErrUnauthorized = errors.New("the server refused Herald's credentials")

package app

import (
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// Snapshot is what the window shows. The page's types are generated from
// these structs (`make bindings`, frontend/wailsjs/go/models.ts).
type Snapshot struct {
	Version  string                `json:"version"`
	Now      time.Time             `json:"now"`
	Gateways []GatewayView         `json:"gateways"`
	Sessions []service.SessionView `json:"sessions"`
	// Live is every gateway's live sessions (the Sessions panel).
	Live      []LiveGatewayView `json:"live"`
	Approvals []ApprovalView    `json:"approvals"`
	Recent    []ApprovalView    `json:"recent"`
	// Choices is the one table of approval choices (labels, keys,
	// descriptions): the window words a choice only from it.
	Choices             []source.ChoiceInfo `json:"choices"`
	NotificationsPaused bool                `json:"notifications_paused"`
	SecretsSessionOnly  bool                `json:"secrets_session_only"`
	Autostart           bool                `json:"autostart"`
	// TrayMissing: no tray host on this desktop (see TrayHostChanged);
	// QuitWithoutTray is what closing the window then does.
	TrayMissing     bool `json:"tray_missing"`
	QuitWithoutTray bool `json:"quit_without_tray"`
	// TrayNoticeDismissed: the user closed the note on how to get a tray
	// (the choice of what closing does stays in the header).
	TrayNoticeDismissed bool `json:"tray_notice_dismissed,omitempty"`
	// NotifyRunFinished: a notification for every finished turn.
	NotifyRunFinished bool `json:"notify_run_finished"`
	// DoNotDisturb: the desktop's notification server holds
	// notifications back (dunst paused, KDE's do not disturb): Herald
	// sends it only what waits for the user.
	DoNotDisturb bool     `json:"do_not_disturb,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	AuditError   string   `json:"audit_error,omitempty"`
}

// GatewayView is one gateway's connection.
type GatewayView struct {
	Name                string `json:"name"`
	URL                 string `json:"url"`
	Kind                string `json:"kind"`
	State               string `json:"state"`
	Error               string `json:"error,omitempty"`
	MayHaveMissedEvents bool   `json:"may_have_missed_events"`
	MissedReason        string `json:"missed_reason,omitempty"`
	// Delivery says, for people, to whom this gateway sends a session's
	// events, as its connection showed (and DeliveryEvidence why).
	Delivery         string `json:"delivery,omitempty"`
	DeliveryEvidence string `json:"delivery_evidence,omitempty"`
	Version          string `json:"version,omitempty"`
	// Transport is what the window calls its things and offers on it.
	Transport Transport `json:"transport"`
	// Bridge is the state of the gateway's bridge, when it is turned on.
	Bridge *BridgeView `json:"bridge,omitempty"`
}

// BridgeView is a gateway's bridge as its row shows it.
type BridgeView struct {
	// Name is the bridge's short name ("Herald bridge").
	Name string `json:"name"`
	// State is its source state ("connected", "config_error", ...).
	State string `json:"state"`
	// Text says the state in plain words; Error is the bridge's own
	// reason, where Text does not say it.
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

// Transport is a gateway's transport as surfaces word and offer it, from
// its driver (source.Driver's Words and Offers): the window never
// decides by the kind.
type Transport struct {
	source.Words
	source.Offers
}

// transportOf is the transport of a driver.
func transportOf(d source.Driver) Transport { return Transport{d.Words, d.Offers} }

// ApprovalView is an approval request for the window: the request as the
// gateway sent it, and what to show of it, made safe in Go
// (approval.Visible). The window shows only the display fields, as text.
type ApprovalView struct {
	approval.Request
	ID             string           `json:"id"`              // short id, as the terminal shows it
	DisplayCommand string           `json:"display_command"` // Display.Command
	Display        approval.Display `json:"display"`
	// Transport is its gateway's (what its session is called).
	Transport Transport `json:"transport"`
}

func approvalView(r approval.Request) ApprovalView { return approvalViewIn(r, "") }

// approvalViewIn is approvalView with the session's one name (its title
// where the gateway lists one).
func approvalViewIn(r approval.Request, session string) ApprovalView {
	d := r.DisplayIn(session)
	return ApprovalView{Request: r, ID: service.ShortKey(r.Key), DisplayCommand: d.Command, Display: d, Transport: Transport{Words: source.GenericWords}}
}

// HistoryEntry is an audit log entry for the window, with its command as
// shown.
type HistoryEntry struct {
	approval.Entry
	DisplayCommand string `json:"display_command,omitempty"` // Visible(Command)
	DisplayError   string `json:"display_error,omitempty"`   // VisibleLine(Error)
	DisplayGateway string `json:"display_gateway,omitempty"` // VisibleLine(Gateway)
	// DisplayQuestion is what a prompt asked (VisibleLine(Question)) and
	// DisplayChoice its answer as recorded: never a password or secret.
	DisplayQuestion string `json:"display_question,omitempty"`
	DisplayChoice   string `json:"display_choice,omitempty"`
	// DisplaySession is the session's one name (service.SessionNames.Of),
	// shown as the gateway card and the Sessions panel show it.
	DisplaySession string `json:"display_session,omitempty"`
	// DisplayHidden says what Hermes hid in the command
	// (approval.HiddenText): the command shown is not all that ran.
	DisplayHidden string `json:"display_hidden,omitempty"`
}

func historyEntry(le service.LogEntry) HistoryEntry {
	e := le.Entry
	choice := e.Choice
	if !e.RequestKind.IsPrompt() {
		choice = source.ChoiceLabel(choice) // an approval's answer, as its button said it
	}
	h := HistoryEntry{Entry: e, DisplayGateway: approval.VisibleLine(e.Gateway), DisplayError: approval.VisibleLine(e.Error),
		DisplayQuestion: approval.VisibleLine(e.Question), DisplayChoice: approval.VisibleLine(choice), DisplaySession: clipLine(le.SessionName, liveTitleMax)}
	if e.Command != "" {
		h.DisplayCommand, h.DisplayHidden = e.DisplayCommand(), approval.HiddenText(e.Command)
	}
	return h
}

// AddGatewayRequest is the Add/Edit gateway form. Its sign-in is one of
// the kind's (GatewayKinds) and carries at most one secret.
type AddGatewayRequest struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Kind is a registered transport's (GatewayKinds); "" is the default.
	Kind string `json:"kind,omitempty"`
	// Auth is the sign-in: one of the kind's AuthMode names.
	Auth string `json:"auth"`
	// Secret is the sign-in's secret, for the keychain ("" on Edit
	// keeps the stored one); Username goes with a sign-in that asks
	// for one.
	Secret   string `json:"secret,omitempty"`
	Username string `json:"username,omitempty"`
	CAFile   string `json:"ca_file,omitempty"`
	// Bridge also follows the gateway's bridge (GatewayKind.Bridge).
	Bridge bool `json:"bridge,omitempty"`
}

// GatewayFormView is a configured gateway for the Edit form: never its
// secret, only whether the keychain holds one.
type GatewayFormView struct {
	AddGatewayRequest
	HasSecret bool `json:"has_secret"`
}

// GatewayKind is one transport as the Add/Edit form offers it, from its
// driver: the form has no list of kinds of its own.
type GatewayKind struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// Hint says what the transport speaks and where ("WebSocket, port
	// 9119").
	Hint       string `json:"hint,omitempty"`
	DefaultURL string `json:"default_url"`
	// Detect: the server can say which sign-in it wants (ProbeGateway).
	Detect bool `json:"detect"`
	// Auth are the sign-ins, the usual one first.
	Auth []SignIn `json:"auth"`
	// Transport is what surfaces call its things and offer on it.
	Transport Transport `json:"transport"`
	// Bridge, when set, is what can be followed beside a gateway of this
	// kind with its address and secret (the driver whose Beside it is).
	Bridge *BridgeOffer `json:"bridge,omitempty"`
	// Beside: this kind rides beside another's gateway, as that
	// gateway's switch (Bridge). The Add form does not offer it on its
	// own; a gateway added as this kind before still edits as one.
	Beside bool `json:"beside,omitempty"`
}

// BridgeOffer is a gateway kind's bridge as the form offers it: its words
// and the kind's sign-ins (SignIn.Name) it works with.
type BridgeOffer struct {
	source.BesideWords
	Auth []string `json:"auth"`
}

// SignIn is one sign-in of a kind, as its source.AuthMode describes it
// (without the command line's flag and variable).
type SignIn struct {
	// Name is what AddGatewayRequest.Auth takes ("token", "none").
	Name  string `json:"name"`
	Label string `json:"label"`
	// Secret labels the secret's field ("" when the sign-in needs none).
	Secret string `json:"secret,omitempty"`
	// Username: the sign-in asks for a user name too.
	Username bool `json:"username,omitempty"`
	// Hint says where the secret comes from (`code` in backquotes).
	Hint string `json:"hint,omitempty"`
}

// ProbeResult is what a server said about its sign-in (ProbeGateway).
type ProbeResult struct {
	Reachable     bool   `json:"reachable"`
	AuthRequired  bool   `json:"auth_required"`
	SuggestedAuth string `json:"suggested_auth"`
	Version       string `json:"version,omitempty"`
	Error         string `json:"error,omitempty"`
}

// TestResult is the outcome of "Test" in the Add gateway form.
type TestResult struct {
	OK      bool   `json:"ok"`
	Stage   string `json:"stage"`
	Message string `json:"message"`
}

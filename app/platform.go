package app

import "time"

// Platform is the seam over Wails' runtime package. The real one
// (wailsPlatform) forwards to Wails with the context Wails gave Herald;
// tests pass a fake. Calling Wails runtime functions with any other context
// kills the process, so nothing else in Herald calls them.
type Platform interface {
	// Emit sends an event to the window.
	Emit(name string, data any)
	// ShowWindow raises the window.
	ShowWindow()
	// Notify shows (or replaces) a desktop notification.
	Notify(n Notification) error
	// Withdraw removes a notification.
	Withdraw(id string) error
	// OnNotificationAction registers the handler for notification clicks
	// and action buttons: an action id, ActionDefault for a click on the
	// body, or ActionClickedOrDismissed where the platform cannot tell a
	// click from a dismissal. A dismissal is no action.
	OnNotificationAction(func(id, action string))
	// Quit ends the app.
	Quit()
}

// Notification is one desktop notification. Title and Body are plain
// text, already made safe (approval.VisibleLine) and bounded; the platform
// escapes them for its notification server.
type Notification struct {
	ID    string
	Title string
	Body  string
	// Actions are (id, label) pairs shown as buttons.
	Actions [][2]string
	// Urgency is the freedesktop urgency (the zero value is normal).
	Urgency Urgency
	// Expire is how long the server shows it; 0: until it is withdrawn
	// (or the server's default for one without actions).
	Expire time.Duration
	// Kind is what it is about and Gateway whose it is: the policy
	// (notePolicy, applied by the desk) decides Urgency and Expire from
	// them, and which notification it replaces.
	Kind    NoteKind
	Gateway string
}

// Urgency is a notification's urgency level.
type Urgency int

// Urgencies, as the freedesktop notification spec names them.
const (
	UrgencyNormal Urgency = iota
	UrgencyLow
	UrgencyCritical
)

// Tray is the system tray icon and menu.
type Tray interface {
	// Update redraws icon, tooltip and menu from the model.
	Update(m TrayModel)
	// Stop removes the icon.
	Stop()
}

// TrayState selects the tray icon.
type TrayState int

// Tray icon states (brand.TrayStates draws them, each its own shape).
const (
	// TrayDisconnected: no gateway connected (or none set up).
	TrayDisconnected TrayState = iota
	// TrayConnected: idle, nothing running.
	TrayConnected
	// TrayPending: something waits for the user and can be answered
	// here (an approval that can be allowed, a question, a password or
	// secret).
	TrayPending
	// TrayDegraded: some gateways are connected and others are not.
	TrayDegraded
	// TrayRunning: a run or turn in progress.
	TrayRunning
	// TrayBlind: Herald cannot see something: a session elsewhere, an
	// approval it can only deny, an answer whose outcome is unknown.
	TrayBlind
)

// TrayModel is what the tray shows.
type TrayModel struct {
	State   TrayState
	Tooltip string
	// Pending is what waits for the user, oldest first (newest last),
	// and the answers on their way or whose outcome is unknown.
	Pending []TrayApproval
	// Waiting counts the requests that can be answered here.
	Waiting int
	// Runs are the runs in progress (at most trayRunsMax; MoreRuns
	// counts the rest).
	Runs     []TrayRun
	MoreRuns int
	// DoNotDisturb: the desktop's notification server holds
	// notifications back; approvals are still counted here.
	DoNotDisturb bool
	// Unseen are sessions running or waiting where Herald does not
	// receive their events (another client's): their approvals cannot
	// reach Herald until it follows them.
	Unseen             []TraySession
	NotificationsPause bool
}

// TraySession is a session Herald does not receive, in the tray menu.
type TraySession struct {
	Gateway, ID string
	// Label names the gateway, the session and what it does.
	Label string
}

// TrayApproval is one pending approval in the tray menu.
type TrayApproval struct {
	Key   string
	Label string
	// Note says why there is no allow-once item (the label could not show the
	// whole command, or Hermes hid part of it), or is empty.
	Note string
	// CanOnce is false when the gateway does not offer "once", the label
	// could not show the whole command as the gateway sent it, or Hermes
	// hid part of it.
	CanOnce bool
	// State is TrayItemWaiting, TrayItemAnswering (its answer is on its
	// way: no choices) or TrayItemUnknown (its answer was sent and its
	// outcome is unknown: no choices, it is not pending).
	State string
	// Kind is the request's kind ("" or approval, clarify, sudo, secret).
	// A prompt has no Allow/Deny: a clarify lists its Choices (raw, as
	// sent back with TrayAnswer; shown as approval.VisibleLine), sudo and
	// secret only "Open…".
	Kind    string
	Choices [trayChoices]string
}

// TrayApproval states.
const (
	TrayItemWaiting   = ""
	TrayItemAnswering = "answering"
	TrayItemUnknown   = "unknown"
)

// TrayActions are what the tray menu can do; the App implements them.
type TrayActions interface {
	TrayAnswer(key, choice string)
	TrayOpen(key string)
	TrayReconnect()
	TrayTogglePause()
	TrayShow()
	TrayQuit()
	// TrayStop stops a run (its Stop, under its line at the menu's top).
	TrayStop(gateway, id string)
	// TrayOpenRun shows a run in the window.
	TrayOpenRun(gateway, id string)
	// TrayFollow follows a session another client drives.
	TrayFollow(gateway, id string)
}

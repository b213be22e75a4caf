package app

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
	// and action buttons ("default" for a click on the body).
	OnNotificationAction(func(id, action string))
	// Quit ends the app.
	Quit()
}

// Notification is one desktop notification.
type Notification struct {
	ID    string
	Title string
	Body  string
	// Actions are (id, label) pairs shown as buttons.
	Actions [][2]string
}

// Tray is the system tray icon and menu.
type Tray interface {
	// Update redraws icon, tooltip and menu from the model.
	Update(m TrayModel)
	// Stop removes the icon.
	Stop()
}

// TrayState selects the tray icon.
type TrayState int

// Tray icon states.
const (
	TrayDisconnected TrayState = iota
	TrayConnected
	TrayPending
)

// TrayModel is what the tray shows.
type TrayModel struct {
	State              TrayState
	Tooltip            string
	Pending            []TrayApproval
	Runs               []string
	NotificationsPause bool
}

// TrayApproval is one pending approval in the tray menu.
type TrayApproval struct {
	Key   string
	Label string
	// CanOnce is false when the gateway does not offer "once".
	CanOnce bool
}

// TrayActions are what the tray menu can do; the App implements them.
type TrayActions interface {
	TrayAnswer(key, choice string)
	TrayOpen(key string)
	TrayReconnect()
	TrayTogglePause()
	TrayShow()
	TrayQuit()
}

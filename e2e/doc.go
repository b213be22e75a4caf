// Package e2e holds Herald's desktop end-to-end test: it builds the real
// desktop binary (frontend included), runs it under a private Xvfb display
// and a private D-Bus session bus with an unlocked gnome-keyring, a fake
// org.freedesktop.Notifications server and a fake
// org.kde.StatusNotifierWatcher, connects it to an in-process fake Hermes
// gateway (backend/hermestest), and answers approvals from a notification
// action, from the tray menu (com.canonical.dbusmenu) and from the window
// (a key press through xdotool).
//
// TestDesktopMonitor runs the binary on a real desktop stack instead:
// xfce4-panel (its systray plugin is the StatusNotifierWatcher) and dunst
// (the notification server, its context menu driven through a dmenu
// stand-in), against the real Hermes 0.19.0 gateway (backend/hermespeer,
// from ../shared/hermes-peer or HERMES_PEER), with a D-Bus monitor
// recording every notification: the tray as run monitor (a turn in the
// tooltip and first menu level, Stop), the notification policy under
// another client's load, and an answer of unknown outcome across a frozen,
// killed and restarted gateway. Its artifacts go to e2e/artifacts/monitor/.
//
// The test is skipped unless HERALD_E2E=1, so `go test ./...` stays fast.
// e2e/run.sh installs the Debian packages it needs and runs it:
//
//	./e2e/run.sh            # apt-get install (if missing), npm ci, go test
//	HERALD_E2E=1 go test -count=1 -v -timeout 15m ./e2e/
//
// Optional environment:
//
//	HERALD_E2E_BINARY=path     use a prebuilt desktop binary (skip both builds)
//	HERALD_E2E_SKIP_FRONTEND=1 do not rebuild frontend/dist before go build
//	HERALD_E2E_KEEP=1          keep the temporary directories (paths are logged)
//	HERALD_E2E_DRIVE=2m        how long TestDesktopMonitor's other client drives (45s)
//
// Screenshots, logs of every child process and summary.txt (binary size,
// idle memory, timings) are written to e2e/artifacts/ (gitignored).
// Nothing outside the test's temporary directories and e2e/artifacts is
// touched, apart from frontend/dist, which the build regenerates.
package e2e

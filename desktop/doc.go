// Package desktop holds the parts of the desktop app that need no web view,
// so that the always-on process stays light: desktop notifications with
// action buttons over D-Bus (org.freedesktop.Notifications) and the
// launcher of the window process, which runs only while the window is open.
//
// It knows nothing of Wails; app/ adapts it to its Platform.
package desktop

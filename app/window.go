package app

import (
	"context"
)

// WindowGeometry is the window's place and size, remembered across runs.
type WindowGeometry struct {
	X         int  `json:"x"`
	Y         int  `json:"y"`
	Width     int  `json:"width"`
	Height    int  `json:"height"`
	Maximised bool `json:"maximised,omitempty"`
}

// The window's size limits (main.go passes them to Wails).
const (
	DefaultWindowWidth  = 1100
	DefaultWindowHeight = 760
	MinWindowWidth      = 720
	MinWindowHeight     = 480
	maxWindowEdge       = 16384
)

// windowPlatform is the part of a Platform that owns a window (Wails'
// does; a Platform without a window need not).
type windowPlatform interface {
	// WindowGeometry reads the window's place and size; ok is false when
	// they cannot be known (minimised, full screen).
	WindowGeometry() (g WindowGeometry, ok bool)
	// ScreenSize is the combined size of the screens (0, 0 if unknown).
	ScreenSize() (w, h int)
	// PlaceWindow moves the window and maximises it if g says so.
	PlaceWindow(g WindowGeometry)
	// HideWindow hides the window (the tray stays).
	HideWindow()
}

// InitialWindowSize is the size to open the window at: the saved one,
// within limits, or the default.
func InitialWindowSize(st Settings) (w, h int) {
	if st.Window == nil || st.Window.Width <= 0 || st.Window.Height <= 0 {
		return DefaultWindowWidth, DefaultWindowHeight
	}
	return clamp(st.Window.Width, MinWindowWidth, maxWindowEdge), clamp(st.Window.Height, MinWindowHeight, maxWindowEdge)
}

func clamp(v, lo, hi int) int {
	return min(max(v, lo), hi)
}

// placeable reports whether a saved window would show on screens of the
// given size: at least its title bar's left half must be on them.
func placeable(g WindowGeometry, screenW, screenH int) bool {
	if screenW <= 0 || screenH <= 0 {
		return false
	}
	return g.X > -g.Width/2 && g.X < screenW-64 && g.Y >= 0 && g.Y < screenH-48
}

// restoreWindow puts the window where it was last, if that is on screen.
func (a *App) restoreWindow() {
	wp, ok := a.plat().(windowPlatform)
	if !ok {
		return
	}
	a.mu.Lock()
	g := a.settings.Window
	a.mu.Unlock()
	if g == nil {
		return
	}
	sw, sh := wp.ScreenSize()
	if !placeable(*g, sw, sh) && !g.Maximised {
		return
	}
	wp.PlaceWindow(*g)
}

// SaveWindowState remembers the window's place and size (the window
// calls it when resized or hidden; closing and quitting call it too).
func (a *App) SaveWindowState() error {
	wp, ok := a.plat().(windowPlatform)
	if !ok {
		return nil
	}
	g, ok := wp.WindowGeometry()
	if !ok {
		return nil
	}
	return a.RememberWindow(g)
}

// RememberWindow stores the window's place and size as measured by whoever
// holds the window (this process, or the window process on Linux).
func (a *App) RememberWindow(g WindowGeometry) error {
	if g.Width <= 0 || g.Height <= 0 {
		return nil
	}
	a.mu.Lock()
	prev := a.settings.Window
	a.mu.Unlock()
	if g.Maximised && prev != nil {
		// Keep the size to return to when it is unmaximised.
		g = WindowGeometry{X: prev.X, Y: prev.Y, Width: prev.Width, Height: prev.Height, Maximised: true}
	}
	if prev != nil && *prev == g {
		return nil
	}
	return a.updateSettings(func(s *Settings) { s.Window = &g })
}

// HideWindow hides the window to the tray (Ctrl+W).
func (a *App) HideWindow() {
	a.SaveWindowState()
	if wp, ok := a.plat().(windowPlatform); ok {
		wp.HideWindow()
	}
}

// QuitApp quits Herald from the window (Ctrl+Q).
func (a *App) QuitApp() {
	a.SaveWindowState()
	if p := a.plat(); p != nil {
		p.Quit()
	}
}

// BeforeClose is Wails' OnBeforeClose hook: remember the window, then let
// it close.
func (a *App) BeforeClose(context.Context) (prevent bool) {
	a.SaveWindowState()
	return false
}

// Package app is the only package in Herald that knows about Wails. It adapts
// the plain-Go backend and approval inbox to bound methods and events, with
// every Wails runtime call behind the Platform interface so it can be tested.
package app

import (
	"context"
	"sync"
)

// Platform is the seam over Wails' runtime package. The real implementation
// lives in wails.go; tests pass a fake. Calling Wails runtime functions with
// a context that did not come from Wails kills the process, so nothing else
// in Herald may call them directly.
type Platform interface {
	EmitEvent(name string, data ...any)
	ShowWindow()
}

// App is the object bound to the frontend.
type App struct {
	mu       sync.Mutex
	platform Platform
	version  string
}

// New returns an App. The platform is attached at Wails start-up.
func New(version string) *App { return &App{version: version} }

// Attach installs the platform once Wails has started.
func (a *App) Attach(p Platform) {
	a.mu.Lock()
	a.platform = p
	a.mu.Unlock()
}

// Startup is Wails' OnStartup hook.
func (a *App) Startup(ctx context.Context) { a.Attach(wailsPlatform{ctx: ctx}) }

// Version is bound to the frontend.
func (a *App) Version() string { return a.version }

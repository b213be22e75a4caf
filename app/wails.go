package app

import (
	"context"

	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// wailsPlatform forwards to Wails' runtime with the context Wails gave us.
type wailsPlatform struct{ ctx context.Context }

func (w wailsPlatform) EmitEvent(name string, data ...any) { runtime.EventsEmit(w.ctx, name, data...) }
func (w wailsPlatform) ShowWindow()                        { runtime.WindowShow(w.ctx) }

// Command herald is the Herald desktop companion for Hermes Agent.
//
// Built with -tags desktop,production (and webkit2_41 on current Linux) it
// runs the native window; without the desktop tag Wails produces a stub.
package main

import (
	"embed"
	"fmt"
	"os"

	"github.com/herald-desktop/herald/app"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
)

//go:embed all:frontend/dist
var assets embed.FS

var version = "dev"

func main() {
	a := app.New(version)
	err := wails.Run(&options.App{
		Title:       "Herald",
		Width:       1024,
		Height:      720,
		AssetServer: &assetserver.Options{Assets: assets},
		OnStartup:   a.Startup,
		Bind:        []any{a},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "herald: could not start the window:", err)
		os.Exit(1)
	}
}

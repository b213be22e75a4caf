// Package hermesplugin carries the Hermes plugin "herald" (the directory
// herald/ beside this file) inside Herald, so `herald bridge install` can
// write it into a Hermes profile.
package hermesplugin

import (
	"embed"
	"io/fs"
)

//go:embed herald/__init__.py herald/herald_core.py herald/plugin.yaml herald/dashboard/manifest.json herald/dashboard/plugin_api.py herald/dashboard/dist/index.js
var files embed.FS

// Name is the plugin's name (plugins.enabled, security.approval.transport).
const Name = "herald"

// Files is the plugin's directory: its files at paths relative to
// plugins/herald/.
func Files() fs.FS {
	sub, err := fs.Sub(files, "herald")
	if err != nil {
		panic(err) // the embedded tree always has herald/
	}
	return sub
}

// Command gen writes Herald's icon files from package brand: the Wails
// build/ folder's appicon.png, icon.svg and windows/icon.ico, and the
// hicolor PNGs under build/linux/icons, and the tray icon in each state at
// 22 px under docs/tray (shown in the README). Run from the repository root:
//
//	go run ./brand/gen
//
// brand's tests fail when a committed file no longer matches the design.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/herald-desktop/herald/brand"
)

func main() {
	out := flag.String("out", "build", "the Wails build/ folder")
	docs := flag.String("docs", "docs", "the docs/ folder (tray state icons)")
	flag.Parse()
	err := write(*out)
	if err == nil {
		err = writeTray(*docs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// writeTray writes docs/tray/<state>.png at brand.TrayDocSize.
func writeTray(docs string) error {
	for _, st := range brand.TrayStates() {
		p := filepath.Join(docs, brand.TrayDocPath(st.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, brand.PNG(brand.TrayDocSize, st.Style), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func write(out string) error {
	files := map[string][]byte{
		"appicon.png": brand.PNG(1024, brand.App),
		"icon.svg":    []byte(brand.SVG(brand.App)),
	}
	ico, err := brand.ICO(brand.App, brand.ICOSizes...)
	if err != nil {
		return err
	}
	files[filepath.Join("windows", "icon.ico")] = ico
	for _, n := range brand.HicolorSizes {
		files[brand.HicolorPath(n)] = brand.PNG(n, brand.App)
	}
	files[brand.HicolorPath(0)] = []byte(brand.SVG(brand.App))
	for name, b := range files {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Command gen writes Herald's icon files from package brand: the Wails
// build/ folder's appicon.png, icon.svg and windows/icon.ico, and the
// hicolor PNGs under build/linux/icons. Run from the repository root:
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
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
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

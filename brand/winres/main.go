// Command winres writes the Windows resources of herald.exe (icon,
// manifest, version information) as a COFF object that `go build` links
// when it lies in the main package's folder, as `wails build` does from
// build/windows/: icon.ico, herald.exe.manifest and info.json, whose
// {{.Info.*}} fields come from wails.json. scripts/cross.sh runs it:
//
//	go run ./brand/winres -arch amd64 -out herald_windows_amd64.syso
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/template"

	"github.com/tc-hib/winres"
	"github.com/tc-hib/winres/version"
)

func main() {
	arch := flag.String("arch", "amd64", "amd64, arm64 or 386")
	out := flag.String("out", "herald_windows_amd64.syso", "the object file to write")
	root := flag.String("root", ".", "the repository root (wails.json, build/)")
	flag.Parse()
	if err := write(*root, *arch, *out); err != nil {
		fmt.Fprintln(os.Stderr, "winres:", err)
		os.Exit(1)
	}
}

// project is what the build/windows templates read from wails.json.
type project struct {
	Name string `json:"name"`
	Info struct {
		CompanyName    string `json:"companyName"`
		ProductName    string `json:"productName"`
		ProductVersion string `json:"productVersion"`
		Copyright      string `json:"copyright"`
		Comments       string `json:"comments"`
	} `json:"info"`
}

func write(root, arch, out string) error {
	archs := map[string]winres.Arch{"amd64": winres.ArchAMD64, "arm64": winres.ArchARM64, "386": winres.ArchI386}
	a, ok := archs[arch]
	if !ok {
		return fmt.Errorf("arch %q is not one of amd64, arm64, 386", arch)
	}
	b, err := os.ReadFile(filepath.Join(root, "wails.json"))
	if err != nil {
		return err
	}
	var p project
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("wails.json: %v", err)
	}
	dir := filepath.Join(root, "build", "windows")
	var rs winres.ResourceSet
	f, err := os.Open(filepath.Join(dir, "icon.ico"))
	if err != nil {
		return err
	}
	defer f.Close()
	ico, err := winres.LoadICO(f)
	if err != nil {
		return fmt.Errorf("icon.ico: %v", err)
	}
	if err := rs.SetIcon(winres.RT_ICON, ico); err != nil {
		return err
	}
	manifest, err := fill(filepath.Join(dir, "herald.exe.manifest"), p)
	if err != nil {
		return err
	}
	m, err := winres.AppManifestFromXML(manifest)
	if err != nil {
		return fmt.Errorf("herald.exe.manifest: %v", err)
	}
	rs.SetManifest(m)
	info, err := fill(filepath.Join(dir, "info.json"), p)
	if err != nil {
		return err
	}
	var v version.Info
	if err := v.UnmarshalJSON(info); err != nil {
		return fmt.Errorf("info.json: %v", err)
	}
	rs.SetVersionInfo(v)
	var obj bytes.Buffer
	if err := rs.WriteObject(&obj, a); err != nil {
		return err
	}
	return os.WriteFile(out, obj.Bytes(), 0o644)
}

// fill resolves a build/windows template as Wails does.
func fill(path string, p project) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := template.New(filepath.Base(path)).Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, p); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out.Bytes(), nil
}

package hermesplugin

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestEmbeddedPluginIsComplete: every file of herald/ that Hermes loads is
// embedded, byte for byte (a new plugin file must be added to go:embed).
func TestEmbeddedPluginIsComplete(t *testing.T) {
	t.Parallel()
	var onDisk []string
	err := filepath.WalkDir("herald", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel("herald", p)
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range onDisk {
		want, _ := os.ReadFile(filepath.Join("herald", rel))
		got, err := fs.ReadFile(Files(), rel)
		if err != nil {
			t.Errorf("%s is not embedded: add it to go:embed in embed.go", rel)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the embedded copy", rel)
		}
	}
	if _, err := fs.Stat(Files(), "plugin.yaml"); err != nil {
		t.Fatal(err)
	}
}

package service

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHistoryPathFollowsHERALD_CONFIG_DIR: the approval history is in
// Herald's configuration folder, which HERALD_CONFIG_DIR moves, for every
// program that writes or reads it.
func TestHistoryPathFollowsHERALD_CONFIG_DIR(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/home/me/.config")
	base, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env  string
		want string
	}{
		{"/tmp/h", "/tmp/h/audit.db"},
		{"", filepath.Join(base, "herald", "audit.db")},
	}
	for _, tc := range tests {
		got, err := HistoryPath(func(k string) string {
			if k == "HERALD_CONFIG_DIR" {
				return tc.env
			}
			return ""
		})
		if err != nil || got != tc.want {
			t.Errorf("HERALD_CONFIG_DIR=%q: %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
}

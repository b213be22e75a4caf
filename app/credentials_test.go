package app

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

func TestInsecureWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  service.SourceConfig
		warn bool
	}{
		{service.SourceConfig{Config: source.Config{URL: "http://gw.lan:9119", Secrets: map[string]string{"token": "t"}}}, true},
		{service.SourceConfig{Config: source.Config{URL: "http://10.0.0.2:8642", Secrets: map[string]string{"key": "k"}}}, true},
		{service.SourceConfig{Config: source.Config{URL: "ws://gw.lan:9119", Secrets: map[string]string{"password": "p"}}}, true},
		{service.SourceConfig{Config: source.Config{URL: "http://gw.lan:9119"}}, false},
		{service.SourceConfig{Config: source.Config{URL: "https://gw.lan:9119", Secrets: map[string]string{"token": "t"}}}, false},
		{service.SourceConfig{Config: source.Config{URL: "http://127.0.0.1:9119", Secrets: map[string]string{"token": "t"}}}, false},
		{service.SourceConfig{Config: source.Config{URL: "http://localhost:9119", Secrets: map[string]string{"token": "t"}}}, false},
		{service.SourceConfig{Config: source.Config{URL: "vm:18791", Secrets: map[string]string{"token": "t"}}}, true},
		{service.SourceConfig{Config: source.Config{URL: "gw.lan", Secrets: map[string]string{"key": "k"}}}, true},
		{service.SourceConfig{Config: source.Config{URL: "127.0.0.1:9119", Secrets: map[string]string{"token": "t"}}}, false},
		{service.SourceConfig{Config: source.Config{URL: "[::1]:8642", Secrets: map[string]string{"key": "k"}}}, false},
		{service.SourceConfig{Config: source.Config{URL: "http://localhost.evil.example:9119", Secrets: map[string]string{"token": "t"}}}, true},
	} {
		msg := insecureWarning("lab", tc.cfg)
		if (msg != "") != tc.warn || (tc.warn && (!strings.Contains(msg, "plain http") || strings.Contains(msg, "t\""))) {
			t.Errorf("%+v: %q", tc.cfg, msg)
		}
	}
}

package app

import (
	"strings"
	"testing"

	"github.com/herald-desktop/herald/service"
)

func TestInsecureWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  service.SourceConfig
		warn bool
	}{
		{service.SourceConfig{URL: "http://gw.lan:9119", Secrets: map[string]string{"token": "t"}}, true},
		{service.SourceConfig{URL: "http://10.0.0.2:8642", Secrets: map[string]string{"key": "k"}}, true},
		{service.SourceConfig{URL: "ws://gw.lan:9119", Secrets: map[string]string{"password": "p"}}, true},
		{service.SourceConfig{URL: "http://gw.lan:9119"}, false},
		{service.SourceConfig{URL: "https://gw.lan:9119", Secrets: map[string]string{"token": "t"}}, false},
		{service.SourceConfig{URL: "http://127.0.0.1:9119", Secrets: map[string]string{"token": "t"}}, false},
		{service.SourceConfig{URL: "http://localhost:9119", Secrets: map[string]string{"token": "t"}}, false},
		{service.SourceConfig{URL: "vm:18791", Secrets: map[string]string{"token": "t"}}, true},
		{service.SourceConfig{URL: "gw.lan", Secrets: map[string]string{"key": "k"}}, true},
		{service.SourceConfig{URL: "127.0.0.1:9119", Secrets: map[string]string{"token": "t"}}, false},
		{service.SourceConfig{URL: "[::1]:8642", Secrets: map[string]string{"key": "k"}}, false},
		{service.SourceConfig{URL: "http://localhost.evil.example:9119", Secrets: map[string]string{"token": "t"}}, true},
	} {
		msg := insecureWarning("lab", tc.cfg)
		if (msg != "") != tc.warn || (tc.warn && (!strings.Contains(msg, "plain http") || strings.Contains(msg, "t\""))) {
			t.Errorf("%+v: %q", tc.cfg, msg)
		}
	}
}

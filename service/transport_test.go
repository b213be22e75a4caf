package service

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"http://me:SECRET@gw:9119/api?token=SECRET",
		"http://gw:99x/?token=SECRET",
		"ws://me:SECRET@gw example/?token=SECRET#SECRET",
		"gw:9119?token=SECRET",
		"https://gw/#SECRET",
	} {
		got := RedactURL(raw)
		if strings.Contains(got, "SECRET") || !strings.Contains(got, "gw") {
			t.Errorf("RedactURL(%q) = %q", raw, got)
		}
	}
	if got := RedactURL("https://gw:9119/x"); got != "https://gw:9119/x" {
		t.Errorf("a clean URL changed: %q", got)
	}
}

package app

import (
	"fmt"

	"github.com/herald-desktop/herald/service"
)

// insecureWarning says when a gateway's secret (token, password or API
// key) goes over plain http to another machine, where anyone on the way
// can read it; "" when it does not.
func insecureWarning(name string, cfg service.SourceConfig) string {
	secret := false
	for _, v := range cfg.Secrets {
		secret = secret || v != ""
	}
	if !secret {
		return ""
	}
	host, plain := service.PlainTextHost(cfg.URL)
	if !plain {
		return ""
	}
	return fmt.Sprintf("gateway %s: its secret goes over plain http to %s, where anyone on the network path can read it; use an https:// URL or an SSH tunnel to 127.0.0.1", name, host)
}

package gateway

import (
	"strings"
	"testing"
)

// TestParseTargetErrorsQuoteWhatWasTyped: an address that is not a URL
// is named as the user typed it, without the http:// Herald adds to a
// bare host, and without a query that may hold a token.
func TestParseTargetErrorsQuoteWhatWasTyped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want, never string }{
		{raw: "foo bar", want: `gateway URL "foo bar" is not a URL: invalid character " " in host name`, never: "http://"},
		{raw: "lab host:9119?token=s3cret", want: `gateway URL "lab host:9119…" is not a URL`, never: "s3cret"},
		{raw: "http://:9119", want: `gateway URL "http://:9119" has no host`},
		{raw: "ws://127.0.0.1:9119/api/ws?token=s3cret", want: `the address "ws://127.0.0.1:9119/api/ws…" carries a token in its ?query: give the address without it and the token separately`, never: "s3cret"},
		{raw: "http://lab:9119/?foo=1&TICKET=x&ticket=s3cret", want: `the address "http://lab:9119/…" carries a ticket`, never: "s3cret"},
	} {
		_, err := parseTarget(tc.raw)
		if err == nil {
			t.Fatalf("parseTarget(%q) accepted it", tc.raw)
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("parseTarget(%q): %q, want it to start %q", tc.raw, err, tc.want)
		}
		if tc.never != "" && strings.Contains(err.Error(), tc.never) {
			t.Errorf("parseTarget(%q): %q shows %q", tc.raw, err, tc.never)
		}
	}
}

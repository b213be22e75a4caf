package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/approval/spooftest"
	"github.com/herald-desktop/herald/approval/surface"
	"github.com/herald-desktop/herald/backend/source"
)

// TestSpoofingTerminalErrors: a gateway's hostile text on every error path
// the terminal prints (watch --start's response body, a refusal, a
// withdrawal reason from herald approve, a problem line, and the same as
// --json records) is shown as approval.VisibleLine: no OSC 52, clear
// screen, CR or bidi control reaches the terminal.
func TestSpoofingTerminalErrors(t *testing.T) {
	t.Parallel()
	for _, c := range spooftest.Errors {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			for name, err := range map[string]error{
				"watch --start":  startFailed("api", "api", errors.New("POST /v1/runs answered HTTP 500: "+c.Command)),
				"refusal":        refusal(source.Status{Gateway: "lab", Err: c.Command}),
				"refusal, api":   refusal(source.Status{Gateway: "lab", Kind: "api", Err: c.Command}),
				"auth refusal":   refusal(source.Status{Gateway: "lab", State: source.StateAuthFailed, Err: c.Command}),
				"herald approve": &approval.EndedError{State: approval.StateCancelled, Outcome: approval.Outcome{Reason: approval.CancelRequestCancel, Detail: c.Command}},
				// An error that quotes the gateway raw: Main's writer still guards it.
				"raw": errors.New(c.Command),
			} {
				// As Main prints it.
				var b bytes.Buffer
				w := surface.TerminalWriter(&b)
				w.Write([]byte("herald watch: " + err.Error() + "\n"))
				text := strings.TrimSuffix(b.String(), "\n")
				if r, ok := spooftest.Raw(text, name == "raw"); ok {
					t.Errorf("%s: %U reaches the terminal raw: %q", name, r, text)
				}
				if name != "raw" {
					if err := spooftest.Check(text, c, false); err != nil {
						t.Errorf("%s: %v: %q", name, err, text)
					}
				}
			}

			// watch's problem line, as text and as --json.
			for _, asJSON := range []bool{false, true} {
				var b bytes.Buffer
				p := &printer{w: surface.TerminalWriter(&b), json: asJSON}
				p.problem("lab", errors.New(c.Command))
				text := b.String()
				if asJSON {
					var rec jsonRecord
					if err := json.Unmarshal(b.Bytes(), &rec); err != nil {
						t.Fatalf("--json: %v: %s", err, text)
					}
					text = rec.Text
				}
				if err := spooftest.Check(strings.TrimSuffix(text, "\n"), c, false); err != nil {
					t.Errorf("problem (json %v): %v: %q", asJSON, err, text)
				}
			}
		})
	}
}

// TestMainGuardsErrors: Main prints a command's error through the terminal
// encoder, so an error that quotes a gateway raw still cannot drive the
// terminal.
func TestMainGuardsErrors(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	// An unknown flag's value is echoed by the flag package.
	code := Main(context.Background(), []string{"pending", "--\x1b]52;c;cm0gLXJmIH4\x07"}, strings.NewReader(""), &out, &errOut)
	if code == 0 {
		t.Fatalf("exit 0")
	}
	if r, ok := spooftest.Raw(strings.ReplaceAll(errOut.String(), "\t", ""), true); ok { // tabs: flag help
		t.Fatalf("%U raw on stderr: %q", r, errOut.String())
	}
	if !strings.Contains(errOut.String(), "␛]52;c;cm0gLXJmIH4⟦BEL⟧") {
		t.Fatalf("stderr does not show the escape: %q", errOut.String())
	}
}

// TestJSONRecordsEscapeC1: --json re-emits a command's C1 controls and
// bidi characters as \u escapes (the same string to a JSON reader).
func TestJSONRecordsEscapeC1(t *testing.T) {
	t.Parallel()
	r := hostileRequest(0, "rm -rf ~\u009b2K\u009d52;c;x\u009c\u202e")
	d := r.Display()
	var b bytes.Buffer
	p := &printer{w: &b, json: true}
	p.record(jsonRecord{Type: "approval", Request: &r, Display: &d})
	if ch, ok := spooftest.Raw(strings.TrimSuffix(b.String(), "\n"), false); ok {
		t.Fatalf("%U raw in %s", ch, b.String())
	}
	var rec jsonRecord
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil || rec.Request.Command != r.Command {
		t.Fatalf("round trip: %v %+v", err, rec.Request)
	}
	b.Reset()
	if err := writeJSON(&b, []approval.Request{r}); err != nil {
		t.Fatal(err)
	}
	if ch, ok := spooftest.Raw(b.String(), true); ok {
		t.Fatalf("%U raw in %s", ch, b.String())
	}
}

// TestWatchStartHostileBody: `herald watch --start` against an API server
// whose refusal carries OSC 52, clear screen and a CR in its body prints
// them as markers, end to end through Main.
func TestWatchStartHostileBody(t *testing.T) {
	t.Parallel()
	const hostile = "quota\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\rok: run started"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/health":
			w.Write([]byte(`{"status": "ok", "platform": "hermes-agent", "version": "0.19.0"}`))
		case r.URL.Path == "/v1/capabilities":
			w.Write([]byte(`{"auth": {"type": "bearer", "required": true}, "features": {"run_submission": true, "run_events_sse": true}}`))
		case r.Method == http.MethodPost && r.URL.Path == "/v1/runs":
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": hostile, "type": "invalid_request_error"}})
			w.WriteHeader(http.StatusBadRequest)
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"watch", "--api", srv.URL, "--api-key", "key-0123456789abcdef", "--start", "hello", "--db", "", "--control", filepath.Join(t.TempDir(), "run", "c.sock")},
		strings.NewReader(""), &out, &errb)
	all := out.String() + errb.String()
	if code == 0 {
		t.Fatalf("exit 0:\n%s", all)
	}
	if r, ok := spooftest.Raw(all, true); ok {
		t.Fatalf("%U reaches the terminal raw:\n%q", r, all)
	}
	if !strings.Contains(errb.String(), "quota␛]52;c;cm0gLXJmIH4=⟦BEL⟧␛[2J⟦CR⟧ok: run started") {
		t.Fatalf("the body is not shown with markers:\n%s", errb.String())
	}
}

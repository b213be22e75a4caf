package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/wire"
	"github.com/herald-desktop/herald/service"
)

// TestRunLineShowsIDsVisibly: `herald stop` lists runs by the id the
// gateway sent; a hostile id cannot rewrite the terminal line.
func TestRunLineShowsIDsVisibly(t *testing.T) {
	t.Parallel()
	line := runLine(service.RunRef{Gateway: "lab", ID: "run\x1b[2K\rfake", Transport: "api", Tool: "terminal: ls"})
	if strings.ContainsAny(line, "\x1b\r") || !strings.Contains(line, "terminal: ls") {
		t.Fatalf("runLine = %q", line)
	}
}

// TestRunLineNamesWhatStopTakes: `herald stop`'s list names each run by
// the id `herald stop ID` takes (a session's stored id, else the run id),
// what it is in words (session, run), never a transport's code, and its
// one name.
func TestRunLineNamesWhatStopTakes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    service.RunRef
		want string
	}{
		{service.RunRef{Gateway: "lab", ID: "ca13519d", StoredID: "20261203_193110_b96785", Transport: "ws", Name: "Nightly backup check"}, "lab/20261203_193110_b96785  session “Nightly backup check”  "},
		{service.RunRef{Gateway: "api", ID: "run_4e2cef54a13d42a38a1a90b47e38cffa", Transport: "api", Tool: "slow 60", Name: "slow 60"}, "api/run_4e2cef54a13d42a38a1a90b47e38cffa  run “slow 60”  slow 60"},
	} {
		if got := runLine(tc.r); !strings.HasPrefix(got, tc.want) {
			t.Errorf("runLine = %q, want it to start %q", got, tc.want)
		}
	}
}

// TestAskDirectUnreachableSaysSoAtOnce: an unreachable --gateway is
// reported on stderr at the first failure, not only after the connect
// timeout, and the final error says what failed once.
func TestAskDirectUnreachableSaysSoAtOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	_, e, code := run(t, "ask", "--gateway", "http://"+addr, "--token", "t", "--connect-timeout", "1s", "hi")
	if code != 1 {
		t.Fatalf("exit %d, stderr %q", code, e)
	}
	first, rest, _ := strings.Cut(e, "\n")
	if !strings.Contains(first, "retrying for up to 1s") || !strings.Contains(first, "cannot reach") {
		t.Fatalf("the first line does not say what is happening: %q", e)
	}
	if !strings.Contains(rest, "could not connect") || strings.Contains(rest, "check the URL and that Hermes runs") {
		t.Fatalf("final error %q", rest)
	}
}

// TestWatchSaysAnAnswerOnce: an approval answered with a key in this
// watch is confirmed by the key handler's ✓ line only; one answered from
// another surface gets its own line.
func TestWatchSaysAnAnswerOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		surface string
		lines   int
	}{{"terminal", 0}, {"cli", 1}, {"window", 1}} {
		var b strings.Builder
		r := approval.Request{Key: "lab/srq/1", Kind: approval.KindApproval, Command: "rm -rf ./build", State: approval.StateResolved, Outcome: approval.Outcome{Choice: "deny", Surface: tc.surface}}
		printApproval(&printer{w: &b}, &keys{}, approval.Change{Kind: approval.ChangeUpdated, Request: r})
		if got := strings.Count(b.String(), "confirmed by the gateway"); got != tc.lines {
			t.Errorf("answered from %s: %q, want %d confirmation lines", tc.surface, b.String(), tc.lines)
		}
	}
}

// TestInterruptedCommandSaysSo: a command cut short by Ctrl-C says
// "interrupted" (exit 130), not "no running Herald found".
func TestInterruptedCommandSaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "herald")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(sock, 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := Main(ctx, []string{"pending", "--control", sock}, strings.NewReader(""), &out, &errb)
	if code != 130 || !strings.Contains(errb.String(), "interrupted") || strings.Contains(errb.String(), "no running Herald") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// TestPrintAskWordsTheTransport: a new conversation is named as its
// transport names it (an API server's is a run), and by its one name, as
// the window names it, with its id (whole, in the form surfaces show it)
// after it.
func TestPrintAskWordsTheTransport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    service.AskResult
		want string
	}{
		{service.AskResult{Gateway: "lab", Transport: "ws", Session: "a1", StoredSession: "2026_x", NewSession: true, Status: "streaming", Name: "fix the tests"}, "lab: new session “fix the tests” (2026_x): streaming (confirmed by the gateway)\n"},
		{service.AskResult{Gateway: "api", Transport: "api", Session: "run_1", NewSession: true, Status: "started", Name: "clean up"}, "api: new run “clean up” (run_1): started (confirmed by the gateway)\n"},
		{service.AskResult{Gateway: "lab", Transport: "ws", Session: "a1", StoredSession: "2026_x", Status: "queued", Name: "Fix the build"}, "lab · “Fix the build” (2026_x): queued (confirmed by the gateway)\n"},
		{service.AskResult{Gateway: "lab", Transport: "ws", Session: "a1", Status: "queued"}, "lab · a1: queued (confirmed by the gateway)\n"}, // from a Herald that sends no name
	} {
		var b strings.Builder
		if err := printAsk(&printer{w: &b}, tc.r); err != nil || b.String() != tc.want {
			t.Errorf("printAsk(%+v) = %q, %v; want %q", tc.r, b.String(), err, tc.want)
		}
	}
}

// TestRunEndsInWords: the feed says how a run ended in words ("run
// completed"), not as the event's name.
func TestRunEndsInWords(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]string{wire.RunCompleted: "● run completed", wire.RunFailed: "● run failed", wire.RunCancelled: "● run cancelled"} {
		var b strings.Builder
		printEvent(&printer{w: &b}, wire.Event{Gateway: "api", Session: "run_0129590fab734db4", Kind: kind}, "")
		if got := b.String(); !strings.Contains(got, "api · run_0129590fab734db4 "+want) {
			t.Errorf("%s: %q, want %q", kind, got, want)
		}
	}
}

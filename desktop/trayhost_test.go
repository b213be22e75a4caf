package desktop

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// privateBus starts a private session bus (dbus-daemon) and returns its
// address; the test is skipped where dbus-daemon is not installed.
func privateBus(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(line)
}

func connect(t *testing.T, addr string) *dbus.Conn {
	t.Helper()
	c, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWatchTrayHostFollowsTheWatcher: on a bus without a tray host the
// watcher says so at once; it says a host appeared when a process takes
// the StatusNotifierWatcher name, and that it went when that process
// leaves.
func TestWatchTrayHostFollowsTheWatcher(t *testing.T) {
	t.Parallel()
	addr := privateBus(t)
	got := make(chan bool, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := watchTrayHost(ctx, connect(t, addr), func(p bool) { got <- p }); err != nil {
		t.Fatal(err)
	}
	next := func(want bool, what string) {
		t.Helper()
		select {
		case p := <-got:
			if p != want {
				t.Fatalf("%s: present=%v", what, p)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not reported", what)
		}
	}
	next(false, "no tray host at start")
	host := connect(t, addr)
	if r, err := host.RequestName(trayWatcher, dbus.NameFlagDoNotQueue); err != nil || r != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("taking the watcher's name: %v %v", r, err)
	}
	next(true, "a tray host appeared")
	host.Close()
	next(false, "the tray host went")
}

// TestLauncherOnExitOnlyWhenClosed: OnExit runs when the window process
// ends by itself (the user closed the window), not when Stop ends it.
func TestLauncherOnExitOnlyWhenClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		stop   bool
		called bool
	}{
		{args: []string{"-c", "exit 0"}, called: true},
		{args: []string{"-c", "sleep 30"}, stop: true, called: false},
	} {
		exited := make(chan struct{}, 1)
		l := &Launcher{Path: "/bin/sh", Args: tc.args, OnExit: func() { exited <- struct{}{} }}
		if _, err := l.Start(); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		done := l.done
		l.mu.Unlock()
		if tc.stop {
			l.Stop(5 * time.Second)
		}
		<-done
		select {
		case <-exited:
			if !tc.called {
				t.Errorf("%q: OnExit ran after Stop", tc.args)
			}
		case <-time.After(2 * time.Second):
			if tc.called {
				t.Errorf("%q: OnExit did not run", tc.args)
			}
		}
	}
}

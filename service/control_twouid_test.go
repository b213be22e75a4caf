//go:build linux

package service

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/clock"
	"github.com/herald-desktop/herald/backend/wire"
)

// otherUID is the second local user: nobody, which exists everywhere and
// needs no useradd.
const otherUID = 65534

// twoUsers prepares a shared sticky folder (like /tmp) and a copy of the
// test binary that the other user can run; it skips where this process
// cannot start processes as another user.
func twoUsers(t *testing.T) (shared, bin string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the two-user control socket test runs a helper as uid 65534 (nobody), which needs root; run the tests as root (as CI does) to include it")
	}
	shared, err := os.MkdirTemp("", "herald-twouid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(shared, "helper.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// Can we switch users at all here (a container may forbid setuid)?
	probe := exec.Command(bin, "-test.run=^$")
	probe.Env = []string{"HERALD_CONTROL_HELPER=probe"}
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	if out, err := probe.CombinedOutput(); err != nil && !strings.Contains(string(out), "unknown helper mode") {
		t.Skipf("cannot run a process as uid %d here (%v: %s); the two-user test needs that", otherUID, err, out)
	}
	return shared, bin
}

// helper starts the helper as the other user and returns its stdout lines.
func helper(t *testing.T, bin, mode, path string, env ...string) (<-chan string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append([]string{"HERALD_CONTROL_HELPER=" + mode, "HERALD_CONTROL_PATH=" + path}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return lines, cmd
}

func next(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the helper exited early")
		}
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("the helper said nothing for 20 s")
	}
	return ""
}

// TestControlSocketTwoUsers: another local user who pre-creates the socket
// folder and serves a fake socket is neither trusted by `herald
// pending/approve` (nothing is sent to it) nor able to make Herald serve
// there; and another user who reaches a real Herald's socket gets
// nothing and answers nothing.
func TestControlSocketTwoUsers(t *testing.T) {
	shared, bin := twoUsers(t)

	t.Run("another user cannot serve", func(t *testing.T) {
		dir := filepath.Join(shared, "herald-0") // what DefaultControlPath uses without XDG_RUNTIME_DIR
		sock := filepath.Join(dir, "control.sock")
		lines, cmd := helper(t, bin, "squat", sock)
		if l := next(t, lines); l != "ready" {
			t.Fatalf("helper: %s", l)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// The path checks catch the squatter.
		_, err := Control(ctx, sock, ControlRequest{Op: "approve", Key: "x", Choice: "once"})
		if !errors.Is(err, ErrUnsafeControl) || !strings.Contains(err.Error(), "another user") {
			t.Fatalf("client talking to a squatted socket: %v", err)
		}
		t.Logf("herald approve says: %v", err)
		s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
		defer s.Close()
		if err := s.ServeControl(ctx, sock); !errors.Is(err, ErrUnsafeControl) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("serving in a squatted folder: %v", err)
		}
		// Even if the files look like ours (say, the attacker had a way to
		// hand them over), the peer check catches the process.
		for _, p := range []string{dir, sock} {
			if err := os.Lchown(p, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		_, err = Control(ctx, sock, ControlRequest{Op: "approve", Key: "x", Choice: "once"})
		if !errors.Is(err, ErrUnsafeControl) || !strings.Contains(err.Error(), "served by another user (uid 65534") {
			t.Fatalf("client talking to another user's server: %v", err)
		}
		t.Logf("herald approve says: %v", err)
		if l := next(t, lines); l != "received 0 bytes" {
			t.Fatalf("the fake server got something: %s", l)
		}
		cmd.Wait()
	})

	t.Run("another user cannot talk", func(t *testing.T) {
		dir, err := os.MkdirTemp(shared, "victim-")
		if err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(dir, "herald", "control.sock")
		s := New(Config{Clock: clock.NewFake(time.Unix(0, 0)), Store: approval.NewMemoryStore()})
		defer s.Close()
		s.onEvent(ev(wire.ApprovalRequest, "s1", map[string]any{"command": "rm -rf ./secret-project", "choices": []string{"once", "deny"}}))
		key := s.Inbox().Pending()[0].Key
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := s.ServeControl(ctx, sock); err != nil {
			t.Fatal(err)
		}
		// As served, the other user cannot even reach the socket.
		lines, _ := helper(t, bin, "client", sock, "HERALD_CONTROL_KEY="+key)
		if l := next(t, lines); !strings.Contains(l, "permission denied") {
			t.Fatalf("other user reached a private socket: %s", l)
		}
		// Open the folder and socket to everyone (a careless chmod): the
		// server still refuses the other user's connection.
		os.Chmod(dir, 0o755)
		os.Chmod(filepath.Dir(sock), 0o755)
		os.Chmod(sock, 0o666)
		lines, _ = helper(t, bin, "client", sock, "HERALD_CONTROL_KEY="+key)
		var got []string
		for l := next(t, lines); l != "closed"; l = next(t, lines) {
			got = append(got, l)
		}
		all := strings.Join(got, "\n")
		if !strings.Contains(all, "refused") || strings.Contains(all, "secret-project") || strings.Count(all, "reply:") != 1 {
			t.Fatalf("other user's session: %q", all)
		}
		t.Logf("other user got: %s", all)
		if r, _ := s.Inbox().Get(key); r.State != approval.StatePending {
			t.Fatalf("the request is %s after the other user's approve, want pending", r.State)
		}
		if entries, _ := s.History(approval.Filter{Key: key}); len(entries) != 1 {
			t.Fatalf("audit log has %d entries for the request, want only its arrival", len(entries))
		}
	})
}

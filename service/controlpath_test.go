package service

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/clock"
)

// TestControlPathChecks covers every way the socket's folder or the socket
// itself can be unsafe, for both ends: the server refuses to run and the
// client refuses to send. A wrong owner is simulated through the uid seam
// (checking as a uid that does not own the files).
func TestControlPathChecks(t *testing.T) {
	t.Parallel()
	me := os.Getuid()
	type layout func(t *testing.T, dir, sock string)
	serveReal := func(t *testing.T, dir, sock string) {
		s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(func() { cancel(); s.Close() })
		if err := s.ServeControl(ctx, sock); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		// setup prepares dir (already created 0700) and sock.
		setup layout
		uid   int
		// serveErr and clientErr are substrings of the errors; "" means
		// that end works.
		serveErr, clientErr string
	}{
		{name: "private folder, no socket yet", setup: func(*testing.T, string, string) {}, clientErr: "no running Herald"},
		{name: "private folder and socket", setup: serveReal, serveErr: "already running"},
		{name: "folder missing is created", setup: func(t *testing.T, dir, _ string) { os.Remove(dir) }, clientErr: "no running Herald"},
		{name: "folder group/world readable", setup: func(t *testing.T, dir, _ string) { os.Chmod(dir, 0o755) }, serveErr: "chmod 700", clientErr: "no running Herald"},
		{name: "folder mode wrong with a socket", setup: func(t *testing.T, dir, sock string) { serveReal(t, dir, sock); os.Chmod(dir, 0o711) }, serveErr: "mode 0711", clientErr: "mode 0711"},
		{name: "folder owned by another user", setup: func(*testing.T, string, string) {}, uid: me + 1, serveErr: "belongs to another user", clientErr: "no running Herald"},
		{name: "folder and socket owned by another user", setup: serveReal, uid: me + 1, serveErr: "belongs to another user", clientErr: "belongs to another user"},
		{name: "folder is a symlink", setup: func(t *testing.T, dir, _ string) {
			real := dir + ".real"
			os.Mkdir(real, 0o700)
			os.Remove(dir)
			if err := os.Symlink(real, dir); err != nil {
				t.Fatal(err)
			}
		}, serveErr: "is a symlink", clientErr: "no running Herald"},
		{name: "folder is a symlink to a served socket", setup: func(t *testing.T, dir, sock string) {
			real := dir + ".real"
			os.Mkdir(real, 0o700)
			serveReal(t, real, filepath.Join(real, filepath.Base(sock)))
			os.Remove(dir)
			os.Symlink(real, dir)
		}, serveErr: "is a symlink", clientErr: "is a symlink"},
		{name: "folder is a file", setup: func(t *testing.T, dir, _ string) { os.Remove(dir); os.WriteFile(dir, nil, 0o600) }, serveErr: "not a directory", clientErr: "not a directory"},
		{name: "socket is a symlink", setup: func(t *testing.T, dir, sock string) {
			other := filepath.Join(t.TempDir(), "other", "other.sock")
			serveReal(t, filepath.Dir(other), other)
			os.Symlink(other, sock)
		}, serveErr: "is a symlink", clientErr: "is a symlink"},
		{name: "socket is a regular file", setup: func(t *testing.T, _, sock string) { os.WriteFile(sock, nil, 0o600) }, serveErr: "not a socket", clientErr: "not a socket"},
		{name: "socket world writable", setup: func(t *testing.T, dir, sock string) { serveReal(t, dir, sock); os.Chmod(sock, 0o666) }, serveErr: "mode 0666", clientErr: "mode 0666"},
		{name: "socket replaced by another listener's symlink", setup: func(t *testing.T, dir, sock string) {
			serveReal(t, dir, sock)
			other := filepath.Join(t.TempDir(), "fake", "fake.sock")
			os.Mkdir(filepath.Dir(other), 0o700)
			ln, err := net.Listen("unix", other)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			os.Remove(sock)
			os.Symlink(other, sock)
		}, serveErr: "is a symlink", clientErr: "is a symlink"},
		{name: "stale socket of a crashed run is replaced", setup: func(t *testing.T, _, sock string) {
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			os.Chmod(sock, 0o600)
			ln.Close()
		}, clientErr: "no running Herald"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "herald")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "control.sock")
			tc.setup(t, dir, sock)
			uid := tc.uid
			if uid == 0 {
				uid = me
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			_, cerr := control(ctx, sock, ControlRequest{Op: "pending"}, uid)
			check(t, "client", cerr, tc.clientErr)

			s := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
			defer s.Close()
			sctx, scancel := context.WithCancel(ctx)
			defer scancel()
			serr := s.serveControl(sctx, sock, uid)
			check(t, "server", serr, tc.serveErr)
			if serr == nil {
				// It serves: then the client gets through.
				if _, err := control(ctx, sock, ControlRequest{Op: "pending"}, uid); err != nil {
					t.Fatalf("client of a safe server: %v", err)
				}
			}
		})
	}
}

func check(t *testing.T, who string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("%s: unexpected error %v", who, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("%s: error %v, want one containing %q", who, err, want)
	case err != nil:
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: error is not one line: %q", who, err)
		}
		if errors.Is(err, ErrUnsafeControl) && !strings.Contains(err.Error(), "/") {
			t.Fatalf("%s: refusal names no path: %v", who, err)
		}
		t.Logf("%s says: %v", who, err)
	}
}

// TestControlSocketAppearsPrivate: the control socket never shows at its
// path with the umask's mode (a client finding it then would refuse it as
// unsafe, telling the user to remove a good Herald's socket): it is bound
// and made private under a temporary name first. And a second Herald that
// starts in that moment keeps its own socket: the first one says another
// Herald runs instead of taking the path.
func TestControlSocketAppearsPrivate(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "herald")
	sock := filepath.Join(dir, "control.sock")
	uid := os.Getuid()
	first := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer first.Close()
	second := New(Config{Clock: clock.NewFake(time.Unix(0, 0))})
	defer second.Close()
	bound := 0
	first.controlBound = func(tmp string) {
		bound++
		if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the socket is at its path before it is private: %v", err)
		}
		if _, err := control(ctx, sock, ControlRequest{Op: "pending"}, uid); err == nil || !strings.Contains(err.Error(), "no running Herald") {
			t.Errorf("a client during the start: %v, want no running Herald", err)
		}
		fi, err := os.Lstat(tmp)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the bound socket: %v, mode %v; want 0600", err, fi.Mode())
		}
		// Another Herald starts now and wins.
		if err := second.serveControl(ctx, sock, uid); err != nil {
			t.Errorf("second Herald: %v", err)
		}
	}
	check(t, "first Herald", first.serveControl(ctx, sock, uid), "already running")
	if bound != 1 {
		t.Fatalf("controlBound ran %d times", bound)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v mode %v", err, fi.Mode())
	}
	if _, err := control(ctx, sock, ControlRequest{Op: "pending"}, uid); err != nil {
		t.Fatalf("the second Herald does not answer: %v", err)
	}
	// No temporary names are left behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "control.sock" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the folder holds %v, want only control.sock", names)
	}
}

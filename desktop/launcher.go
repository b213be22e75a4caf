package desktop

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// WindowBinary finds the window program: $HERALD_WINDOW_BINARY, else
// herald-window next to the running executable, else on $PATH.
func WindowBinary() (string, error) {
	if p := os.Getenv("HERALD_WINDOW_BINARY"); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "herald-window")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("herald-window"); err == nil {
		return p, nil
	}
	return "", ErrNoWindow
}

// Launcher runs the window process on demand: at most one at a time, gone
// (with its web view and helper processes) once the window is closed.
type Launcher struct {
	// Path and Args are the program to run (WindowBinary, "window").
	Path string
	Args []string
	// Name, when set, is the child's argv[0]: GTK names the window's
	// WM_CLASS after it before Wails can, and the desktop entry's
	// StartupWMClass is "herald", not "herald-window".
	Name string
	// Env is added to this process's environment.
	Env []string
	// Log receives the child's exits.
	Log *slog.Logger
	// OnExit, when set, is called after the window process ended by
	// itself (the user closed the window), not when Stop ended it.
	OnExit func()

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	stopping bool
}

// Running reports whether the window process is up.
func (l *Launcher) Running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cmd != nil
}

// Start runs the window process unless it is running; it reports whether
// it started one.
func (l *Launcher) Start() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cmd != nil {
		return false, nil
	}
	cmd := exec.Command(l.Path, l.Args...)
	if l.Name != "" {
		cmd.Args[0] = l.Name
	}
	cmd.Env = append(os.Environ(), l.Env...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("cannot open the window (%s): %v", l.Path, err)
	}
	done := make(chan struct{})
	l.cmd, l.done = cmd, done
	go func() {
		err := cmd.Wait()
		if err != nil && l.Log != nil {
			l.Log.Warn("the window process ended", "err", err)
		}
		l.mu.Lock()
		if l.cmd == cmd {
			l.cmd, l.done = nil, nil
		}
		stopped := l.stopping
		l.stopping = false
		l.mu.Unlock()
		close(done)
		if !stopped && l.OnExit != nil {
			l.OnExit()
		}
	}()
	return true, nil
}

// Stop ends the window process: SIGTERM, then SIGKILL after grace.
func (l *Launcher) Stop(grace time.Duration) {
	l.mu.Lock()
	cmd, done := l.cmd, l.done
	if cmd != nil {
		l.stopping = true
	}
	l.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cmd.Process.Kill()
		<-done
	}
}

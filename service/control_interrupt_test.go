package service

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestControlWaitEndsOnInterrupt: Ctrl-C (the context) ends a command's
// wait for Herald's answer at once, says the request may still be carried
// out, and is never reported as "no running Herald".
func TestControlWaitEndsOnInterrupt(t *testing.T) {
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
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // a Herald that never answers (a long confirmation)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Control(ctx, sock, ControlRequest{Op: "stop", Key: "lab/s1"})
		done <- err
	}()
	var c net.Conn
	select {
	case c = <-accepted:
		defer c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the client never connected")
	}
	// The wait for the answer starts once the request is sent. (A Ctrl-C
	// before that, even with the connection accepted, ends the dial: the
	// request was never sent, and the error says interrupted, checked
	// below.)
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatalf("the request never arrived: %v", err)
	}
	cancel() // Ctrl-C
	select {
	case err := <-done:
		if !errors.Is(err, ErrInterrupted) || errors.Is(err, ErrNoDaemon) {
			t.Fatalf("Control after Ctrl-C = %v, want ErrInterrupted", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ctrl-C did not end the wait for Herald's answer")
	}

	// Interrupted before connecting: not "no running Herald" either.
	if _, err := Control(ctx, sock, ControlRequest{Op: "pending"}); errors.Is(err, ErrNoDaemon) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Control with a cancelled context = %v", err)
	}
}

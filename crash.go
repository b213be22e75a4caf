package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// crashDir is where crash logs go: the user cache folder's herald/.
func crashDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "herald")
}

const crashLogName = "crash.log"

// guard runs fn; a panic becomes a short message that names a crash log
// holding the details, and exit code 70 (EX_SOFTWARE).
func guard(stderr io.Writer, dir string, fn func() int) (code int) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		code = 70
		msg := oneLine(fmt.Sprint(r), 160)
		path, err := appendCrashLog(dir, fmt.Sprintf("%s panic: %v\n\n%s\n", time.Now().UTC().Format(time.RFC3339), r, debug.Stack()))
		if err != nil {
			fmt.Fprintf(stderr, "herald: internal error (%s); no crash log could be written (%v). Please report this bug.\n", msg, err)
			return
		}
		fmt.Fprintf(stderr, "herald: internal error (%s). Please report this bug with the details in %s\n", msg, path)
	}()
	return fn()
}

func appendCrashLog(dir, text string) (string, error) {
	if dir == "" {
		return "", errors.New("no cache folder")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, crashLogName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, err
}

// startCrashOutput copies a fatal crash on any goroutine (which no
// recover can catch) into the crash log, so a window started from the app
// menu, whose stderr nobody reads, still leaves the details behind.
func startCrashOutput(dir string) (*os.File, error) {
	if dir == "" {
		return nil, errors.New("no cache folder")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, crashLogName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// oneLine keeps at most n runes of s and no control characters (an
// argument or a panic value may hold anything).
func oneLine(s string, n int) string {
	r := []rune(strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return ' '
		}
		return c
	}, s))
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return string(r)
}

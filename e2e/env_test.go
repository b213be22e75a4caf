//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// artifactsDir is where screenshots, logs and the summary go (relative
// to the package directory, which is go test's working directory).
const artifactsDir = "artifacts"

// proc is a child process the test started; stop ends it and everything
// in its process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // valid after done
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		killGroup(p.cmd.Process.Pid, syscall.SIGKILL) // leftovers in the group
		return
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// killGroup signals the process group pgid (every child we start leads
// its own group, so this reaches its descendants too, e.g. WebKit's).
func killGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		syscall.Kill(-pgid, sig)
	}
}

// tail returns the last n bytes of the process's log.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// env is the private desktop session: Xvfb, a session bus and the
// keyring, plus the directories the app runs in.
type env struct {
	t       *testing.T
	base    string // temp root
	art     string // artifacts dir (absolute)
	display string // ":N"
	busAddr string
	bus     *dbus.Conn // the test's own client connection

	mu    sync.Mutex
	procs []*proc
}

// dir returns base/name, created 0700.
func (e *env) dir(name string) string {
	d := filepath.Join(e.base, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		e.t.Fatal(err)
	}
	return d
}

// childEnv is the environment every child gets: nothing of the caller's
// desktop session leaks in (no DISPLAY, no DBUS_SESSION_BUS_ADDRESS, no
// real HOME), so the test never touches the developer's desktop.
func (e *env) childEnv(extra ...string) []string {
	vars := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.dir("home"),
		"XDG_RUNTIME_DIR=" + e.dir("run"),
		"XDG_CONFIG_HOME=" + e.dir("xdg-config"),
		"XDG_DATA_HOME=" + e.dir("xdg-data"),
		"XDG_CACHE_HOME=" + e.dir("xdg-cache"),
		"XDG_SESSION_TYPE=x11",
		"LANG=C.UTF-8",
		"TZ=UTC",
	}
	if e.display != "" {
		vars = append(vars, "DISPLAY="+e.display)
	}
	if e.busAddr != "" {
		vars = append(vars, "DBUS_SESSION_BUS_ADDRESS="+e.busAddr)
	}
	return append(vars, extra...)
}

type startOpts struct {
	args  []string
	env   []string
	stdin io.Reader
	extra []*os.File // become fd 3, 4, ... in the child
	dir   string
}

// start runs a child in its own process group, its output in
// artifacts/NAME.log; it is stopped at the end of the test.
func (e *env) start(name, bin string, o startOpts) *proc {
	e.t.Helper()
	logPath := filepath.Join(e.art, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(bin, o.args...)
	cmd.Env = o.env
	cmd.Dir = o.dir
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Stdin = o.stdin
	cmd.ExtraFiles = o.extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		e.t.Fatalf("starting %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	e.mu.Lock()
	e.procs = append(e.procs, p)
	e.mu.Unlock()
	return p
}

// stopAll ends every child, newest first (the app before the bus and the
// display it uses).
func (e *env) stopAll() {
	e.mu.Lock()
	ps := append([]*proc(nil), e.procs...)
	e.procs = nil
	e.mu.Unlock()
	for i := len(ps) - 1; i >= 0; i-- {
		ps[i].stop(3 * time.Second)
	}
}

// readLine reads the first line a child writes to a pipe (Xvfb's
// -displayfd, dbus-daemon's --print-address), bounded by timeout.
func readLine(r *os.File, timeout time.Duration, what string, p *proc) (string, error) {
	ch := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	select {
	case l := <-ch:
		if l == "" {
			return "", fmt.Errorf("%s printed nothing; log:\n%s", what, p.tail(2000))
		}
		return l, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited (%v); log:\n%s", what, p.err, p.tail(2000))
	case <-time.After(timeout):
		return "", fmt.Errorf("%s did not start within %s; log:\n%s", what, timeout, p.tail(2000))
	}
}

// startXvfb starts a private X server on a free display.
func (e *env) startXvfb() {
	e.t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	defer r.Close()
	p := e.start("xvfb", "Xvfb", startOpts{
		args:  []string{"-displayfd", "3", "-screen", "0", "1280x860x24", "-nolisten", "tcp", "-noreset"},
		env:   e.childEnv(),
		extra: []*os.File{w},
	})
	w.Close()
	n, err := readLine(r, 20*time.Second, "Xvfb", p)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := strconv.Atoi(n); err != nil {
		e.t.Fatalf("Xvfb printed display %q", n)
	}
	e.display = ":" + n
}

// busConfig is a session bus without service activation: nothing starts
// behind the test's back, and names the app asks for either exist (our
// fakes, the keyring) or fail at once.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// startBus starts a private session bus and connects the test to it.
func (e *env) startBus() {
	e.t.Helper()
	conf := filepath.Join(e.base, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(busConfig, filepath.Join(e.dir("bus"), "socket"))), 0o600); err != nil {
		e.t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	defer r.Close()
	p := e.start("dbus-daemon", "dbus-daemon", startOpts{
		args:  []string{"--config-file=" + conf, "--nofork", "--nopidfile", "--print-address=3"},
		env:   e.childEnv(),
		extra: []*os.File{w},
	})
	w.Close()
	addr, err := readLine(r, 20*time.Second, "dbus-daemon", p)
	if err != nil {
		e.t.Fatal(err)
	}
	e.busAddr = addr
	e.bus = e.connect()
}

// connect opens a new connection to the private bus.
func (e *env) connect() *dbus.Conn {
	e.t.Helper()
	c, err := dbus.Connect(e.busAddr)
	if err != nil {
		e.t.Fatalf("connecting to the private session bus: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// hasOwner asks the bus whether a name is owned.
func (e *env) hasOwner(name string) bool {
	var ok bool
	err := e.bus.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&ok)
	return err == nil && ok
}

// startKeyring runs gnome-keyring-daemon's Secret Service on the private
// bus with a fresh login keyring, unlocked with a throwaway password.
func (e *env) startKeyring() {
	e.t.Helper()
	p := e.start("gnome-keyring", "gnome-keyring-daemon", startOpts{
		args:  []string{"--foreground", "--unlock", "--components=secrets"},
		env:   e.childEnv(),
		stdin: strings.NewReader("herald-e2e-keyring"),
	})
	err := poll(20*time.Second, 50*time.Millisecond, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("gnome-keyring-daemon exited: %v\n%s", p.err, p.tail(2000))
		}
		return e.hasOwner("org.freedesktop.secrets"), nil
	})
	if err != nil {
		e.t.Fatalf("the Secret Service did not appear on the bus: %v", err)
	}
}

// errTimeout is returned by poll when the condition never held.
var errTimeout = errors.New("timed out")

// poll checks cond every interval until it holds, fails, or timeout passes.
func poll(timeout, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %s", errTimeout, timeout)
		}
		time.Sleep(interval)
	}
}

// run executes a short helper command (xdotool, import) with a timeout.
func (e *env) run(timeout time.Duration, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.childEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: timed out after %s", bin, strings.Join(args, " "), timeout)
	} else if err != nil {
		err = fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), err
}

// screenshot saves a PNG of an X window ("root" for the whole screen)
// and returns it decoded.
func (e *env) screenshot(window, path string) (image.Image, error) {
	if _, err := e.run(15*time.Second, "import", "-window", window, "png:"+path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

// colorCount counts the pixels of an image that have exactly these RGB
// values (flat CSS backgrounds render exactly in Xvfb's 24-bit visual).
func colorCount(img image.Image, rgb ...uint32) map[uint32]int {
	want := map[uint32]bool{}
	for _, c := range rgb {
		want[c] = true
	}
	n := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := (r>>8)<<16 | (g>>8)<<8 | bl>>8
			if want[c] {
				n[c]++
			}
		}
	}
	return n
}

// memInfo reads VmRSS (kB) from /proc/PID/status.
func vmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, errors.New("no VmRSS")
}

// pss reads the proportional set size (kB) from /proc/PID/smaps_rollup.
func pss(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Pss:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// groupMembers lists the processes of process group pgid with their
// command names (the app and its WebKit helpers).
func groupMembers(pgid int) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, de := range ents {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		// f[0] state, f[1] ppid, f[2] pgrp
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out[pid] = s[open+1 : close]
		}
	}
	return out
}

// setSubreaper makes the test process adopt orphaned descendants (WebKit
// helpers of a killed app), so they are reaped instead of lingering as
// zombies of PID 1.
func setSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// reapOrphans collects adopted children that exited. Call it only after
// every exec.Cmd has been waited for.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

func mib(kb int) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// upscaleGray enlarges an image k times (nearest neighbour) in grey:
// tesseract reads 14 px UI text far better at three times the size.
func upscaleGray(img image.Image, k int) *image.Gray {
	b := img.Bounds()
	out := image.NewGray(image.Rect(0, 0, b.Dx()*k, b.Dy()*k))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			v := uint8((299*(r>>8) + 587*(g>>8) + 114*(bl>>8)) / 1000)
			for dy := 0; dy < k; dy++ {
				row := out.Pix[(y*k+dy)*out.Stride:]
				for dx := 0; dx < k; dx++ {
					row[x*k+dx] = v
				}
			}
		}
	}
	return out
}

// hueCounts counts pixels by rough hue, whatever their shade: "blue"
// and "red" include the half-transparent (disabled) buttons.
func hueCounts(img image.Image) (blue, red int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r32, g32, b32, _ := img.At(x, y).RGBA()
			r, g, bl := int(r32>>8), int(g32>>8), int(b32>>8)
			switch {
			case bl >= 150 && bl > r+60 && bl > g+20:
				blue++
			case r >= 150 && r > g+60 && r > bl+60:
				red++
			}
		}
	}
	return blue, red
}

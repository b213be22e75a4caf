//go:build linux

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

const (
	gwName = "hermes"
	// sessionTitle is the title the followed session gets: its one name
	// on every surface (and in the README's screenshots).
	sessionTitle = "Nightly backup check"
	// step bounds every single wait of a scenario; a scenario as a whole
	// stays well under a minute when nothing is wrong.
	step = 30 * time.Second
)

// Colours of the window (frontend/src/app.css, ApprovalSheet.svelte),
// used to tell from a screenshot what the window shows.
const (
	colCommand   = 0x1d1d1f // the command block's background
	colPrimary   = 0x0a64d8 // "Allow once" (button.primary)
	colDanger    = 0xc62828 // "Deny" (button.danger)
	colConnected = 0x2e9e5b // a connected gateway's dot
	colAttention = 0xe08a00 // the no-tray notice's border (--attention)
)

var requiredTools = []struct{ bin, pkg string }{
	{"Xvfb", "xvfb"},
	{"dbus-daemon", "dbus-daemon"},
	{"gnome-keyring-daemon", "gnome-keyring"},
	{"xdotool", "xdotool"},
	{"import", "imagemagick"},
	{"xprop", "x11-utils"},
	{"go", "golang (Go 1.26)"},
}

func TestDesktop(t *testing.T) {
	if os.Getenv("HERALD_E2E") != "1" {
		t.Skip("desktop end-to-end test skipped: set HERALD_E2E=1 (or run e2e/run.sh, which installs Xvfb, dbus, gnome-keyring, xdotool, ImageMagick and the GTK/WebKit build packages)")
	}
	var missing []string
	for _, tool := range requiredTools {
		if _, err := exec.LookPath(tool.bin); err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool.bin, tool.pkg))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("missing tools: %s; run e2e/run.sh to install them", strings.Join(missing, ", "))
	}
	setSubreaper()
	sum := &summary{t: t}
	total := time.Now()

	art, err := filepath.Abs(artifactsDir)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(art)
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	docs := newDocShooter(art, docShots)
	base := t.TempDir()
	if os.Getenv("HERALD_E2E_KEEP") == "1" {
		if base, err = os.MkdirTemp("", "herald-e2e-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("keeping the temporary directory %s", base)
	}

	// The frontend and the desktop binary; with HERALD_E2E_DEB, the .deb
	// installed and Herald started as the app menu would.
	bin := buildBinary(t, base, art, sum)
	launch := launcher{bin: bin, wmClass: "herald"}
	if deb := os.Getenv("HERALD_E2E_DEB"); deb != "" {
		launch = installDeb(t, deb, sum)
		bin = launch.bin
	}
	if fi, err := os.Stat(bin); err == nil {
		sum.add("binary", fmt.Sprintf("%s: %d bytes (%.1f MiB)", bin, fi.Size(), float64(fi.Size())/(1<<20)))
	}
	cliWithoutDisplay(t, bin)

	e := &env{t: t, base: base, art: art}
	var srv *hermestest.Server
	t.Cleanup(func() {
		e.stopAll() // the app first, then the bus and the display
		reapOrphans()
		if srv != nil {
			srv.Close()
		}
		sum.write(filepath.Join(art, "summary.txt"))
	})
	t0 := time.Now()
	e.startXvfb()
	e.startBus()
	e.startKeyring()
	sum.add("session", fmt.Sprintf("Xvfb %s, private bus %s, keyring up in %s", e.display, e.busAddr, since(t0)))

	// The desktop services the app talks to, faked on the private bus.
	fakes := e.connect()
	notes, err := newNotifyServer(fakes)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := newWatcher(fakes)
	if err != nil {
		t.Fatal(err)
	}

	// A fake gateway, its token in the keychain, the settings file.
	token := randomHex(16)
	srv = hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern, Token: token})
	live, stored := srv.CreateSession()

	t.Setenv("DBUS_SESSION_BUS_ADDRESS", e.busAddr) // go-keyring uses the session bus
	secrets := app.NewSecrets(app.OSKeyring{})
	if err := secrets.Set(gwName, "token", token); err != nil {
		t.Fatalf("storing the gateway token in gnome-keyring: %v", err)
	}
	if got, err := secrets.Get(gwName, "token"); err != nil || got != token || secrets.SessionOnly() {
		t.Fatalf("the token did not round-trip through the keychain: %q, %v", got, err)
	}
	cfgDir := e.dir("config")
	st := app.DefaultSettings()
	st.CloseToTray = false
	st.Gateways = []app.GatewaySettings{{Name: gwName, URL: srv.URL, Kind: "ws", Auth: "token", Sessions: []string{stored}}}
	store, err := app.NewSettingsStore(cfgDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(st); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(cfgDir, "settings.json")); err == nil && strings.Contains(string(b), token) {
		t.Fatal("settings.json holds the token")
	}

	// Run the real binary.
	t0 = time.Now()
	heraldEnv := e.childEnv("HERALD_CONFIG_DIR="+cfgDir, "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1")
	herald := e.start("herald", launch.bin, startOpts{
		args: launch.args,
		env:  heraldEnv,
		dir:  base,
	})
	h := &harness{t: t, e: e, srv: srv, notes: notes, herald: herald, live: live,
		sock: filepath.Join(base, "run", "herald", "control.sock")}

	var tray *trayClient
	var win string
	ok := t.Run("startup", func(t *testing.T) {
		h.t = t
		reg, err := watch.waitItem(60 * time.Second)
		if err != nil {
			h.fatalf("%v", err)
		}
		if tray, err = newTrayClient(e.bus, reg); err != nil {
			h.fatalf("%v", err)
		}
		t.Logf("tray item registered by %s at %s, menu %s", reg.Sender, reg.Arg, tray.menuPath)
		h.waitView(60*time.Second, "the gateway connected with its session followed", func(v *service.View) bool {
			for _, g := range v.Gateways {
				if g.Gateway == gwName && g.State == source.StateConnected {
					return true
				}
			}
			return false
		})
		if err := poll(step, 50*time.Millisecond, func() (bool, error) {
			for _, s := range srv.Sessions() {
				if s.ID == live && s.Attached {
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			h.fatalf("Herald did not attach to session %s (stored %s): %v", live, stored, err)
		}
		sum.add("startup", fmt.Sprintf("tray registered, gateway connected and session attached %s after exec", since(t0)))
		win = h.window()
		h.windowIdentity(win, launch.wmClass)
	})
	if !ok {
		t.Fatalf("Herald did not start up (see above); its log:\n%s", herald.tail(4000))
	}
	t.Run("live view", func(t *testing.T) {
		h.t = t
		h.waitScreen(win, "the live view with the connected gateway", "01-idle.png", func(s screen) bool {
			return s.exact[colConnected] >= 30
		})
		sum.add("window", fmt.Sprintf("window %s rendered the live view %s after exec", win, since(t0)))
	})
	h.t = t

	// Idle memory, once the app settled.
	open := h.measure()
	sum.add("idle memory, window open", open.line)

	t.Run("notification", func(t *testing.T) {
		h.t = t
		t0 := time.Now()
		cmd := "git push --force origin main"
		srq, choice, key := h.request(cmd)
		n, err := notes.waitFor(step, "for "+key, func(n note) bool { return n.Key == key && n.Open })
		if err != nil {
			h.fatalf("%v", err)
		}
		t.Logf("notification #%d: summary %q body %q actions %q", n.ID, n.Summary, n.Body, n.Actions)
		if !n.HasAction("once") || !n.HasAction("deny") {
			t.Errorf("notification actions %q lack once and deny", n.Actions)
		}
		if !strings.Contains(n.Body, cmd) {
			t.Errorf("notification body %q lacks the command %q", n.Body, cmd)
		}
		if n.Icon != "herald" {
			t.Errorf("notification icon %q, want the themed icon %q the package installs", n.Icon, "herald")
		}
		if !strings.Contains(n.Summary, gwName) {
			t.Errorf("notification summary %q does not name the gateway", n.Summary)
		}
		h.invokeUntilAnswered(n.ID, key, "once")
		h.waitChoice(choice, srq, cmd, "once")
		// A server closes a notification whose action was invoked (GNOME,
		// KDE, dunst do), unless the app withdrew it first once the
		// gateway confirmed; either is right.
		if err := notes.closeAfterAction(n.ID); err != nil {
			t.Logf("%v: the app withdrew it first", err)
		}
		h.waitResolved(key, "once", "notification")
		if _, err := notes.waitFor(step, "closed", func(x note) bool { return x.ID == n.ID && !x.Open }); err != nil {
			t.Errorf("the answered notification is still up: %v", err)
		}
		// The notification is gone and it is not shown again.
		for _, x := range notes.snapshot() {
			if x.Key == key && (x.Open || x.ID != n.ID) {
				t.Errorf("notification for %s is still up or was sent again: %+v", key, x)
			}
		}
		for _, x := range notes.snapshot() {
			if x.ID == n.ID {
				t.Logf("notification #%d closed by %q; CloseNotification calls from the app: %d", x.ID, x.ClosedBy, x.AppCloses)
			}
		}
		sum.add("A notification", fmt.Sprintf("answered %q from the notification action in %s", "once", since(t0)))
	})

	t.Run("tray", func(t *testing.T) {
		h.t = t
		if tray == nil {
			t.Skip("no tray")
		}
		t0 := time.Now()
		cmd := "kubectl delete namespace staging"
		srq, choice, key := h.request(cmd)
		n, err := notes.waitFor(step, "for "+key, func(n note) bool { return n.Key == key && n.Open })
		if err != nil {
			h.fatalf("%v", err)
		}
		h.clickUntilAnswered(tray, key, cmd, "Allow once")
		h.waitChoice(choice, srq, cmd, "once")
		h.waitResolved(key, "once", "tray")
		if _, err := notes.waitFor(step, "withdrawn by the app", func(x note) bool {
			return x.ID == n.ID && !x.Open && x.ClosedBy == "app" && x.AppCloses > 0
		}); err != nil {
			t.Errorf("the notification was not withdrawn with CloseNotification: %v", err)
		}
		// The menu drops the answered approval.
		if err := poll(step, 100*time.Millisecond, func() (bool, error) {
			m, err := tray.layout()
			if err != nil {
				return false, nil
			}
			_, listed := m.find(func(n menuNode) bool { return strings.Contains(n.Label, cmd) })
			return !listed, nil
		}); err != nil {
			m, _ := tray.layout()
			t.Errorf("the tray menu still lists %q: %v\n%s", cmd, err, m)
		}
		sum.add("B tray", fmt.Sprintf("answered %q from the tray menu in %s; notification withdrawn", "once", since(t0)))
	})

	t.Run("window", func(t *testing.T) {
		h.t = t
		if tray == nil || win == "" {
			t.Skip("no tray or window")
		}
		// The session is titled first: the README shows this approval.
		name := h.titled(stored, sessionTitle)
		t0 := time.Now()
		cmd := "rm -rf ./build/cache"
		srq, choice, key := h.request(cmd)
		n, err := notes.waitFor(step, "for "+key, func(n note) bool { return n.Key == key && n.Open })
		if err != nil {
			h.fatalf("%v", err)
		}
		// Open the approval from the tray ("Open…"): the window selects
		// it, so its sheet stays on screen with the outcome afterwards.
		open, err := tray.findEntry(step, "“Open…” under the approval", func(p, c menuNode) bool {
			return strings.Contains(p.Label, cmd) && c.Label == "Open…"
		})
		if err != nil {
			h.fatalf("%v", err)
		}
		if err := tray.click(open.ID); err != nil {
			t.Fatal(err)
		}
		// Enabled buttons: "Allow once" and "Deny" in their exact colours.
		h.waitScreen(win, "the pending approval sheet", "10-pending.png", func(s screen) bool {
			return s.exact[colCommand] >= 4000 && s.exact[colPrimary] >= 1500 && s.exact[colDanger] >= 800
		})
		shown := since(t0)
		e.screenshot("root", filepath.Join(art, "10-pending-screen.png"))
		h.ocr("10-pending.png", []string{"Waiting for you", "Allow once", "Deny"}, []string{cmd})
		// The sheet names the session as the card, the panel and the
		// quick prompt do: the README's picture of Herald.
		h.sheetNames(win, "10-pending-names.png", name, live, stored)
		docs.shot(t, "10-pending-names.png", "docs/screenshot.png")

		t1 := time.Now() // reading the screenshots took seconds: not the user's time
		h.pressUntilAnswered(win, key, "o")
		h.waitChoice(choice, srq, cmd, "once")
		h.waitResolved(key, "once", "window")
		if _, err := notes.waitFor(step, "withdrawn by the app", func(x note) bool {
			return x.ID == n.ID && !x.Open && x.ClosedBy == "app"
		}); err != nil {
			t.Errorf("the notification was not withdrawn with CloseNotification: %v", err)
		}
		// The sheet without any button, not even a greyed-out one (while
		// the answer is on its way they are half transparent), and no
		// countdown or pending badge.
		h.waitScreen(win, "the confirmed outcome", "11-confirmed.png", func(s screen) bool {
			return s.exact[colCommand] >= 4000 && s.blue < 1000 && s.red < 300
		})
		confirmed := since(t1)
		e.screenshot("root", filepath.Join(art, "11-confirmed-screen.png"))
		h.ocr("11-confirmed.png", []string{"confirmed by the gateway", "from window"}, []string{cmd})
		docs.shot(t, "11-confirmed.png", "docs/screenshots/approval.png")
		sum.add("C window", fmt.Sprintf("sheet shown %s after the request; answered %q with the o key, confirmed on the sheet %s after the press; notification withdrawn", shown, "once", confirmed))
	})

	// The window scrolled (a long Sessions list, wheeled down) when an
	// approval arrives: its sheet is on screen all the same.
	t.Run("approval while scrolled", func(t *testing.T) {
		h.t = t
		if win == "" {
			t.Skip("no window")
		}
		// Esc closes the sheet the last scenario left selected (as a
		// person would), so what comes next is the window's own choice.
		for attempt := 1; ; attempt++ {
			if _, err := e.run(10*time.Second, "xdotool", "windowfocus", "--sync", win); err != nil {
				t.Logf("focusing the window: %v", err)
			}
			time.Sleep(time.Second) // the window ignores keys for 700 ms after a focus change
			if _, err := e.run(10*time.Second, "xdotool", "key", "--clearmodifiers", "Escape"); err != nil {
				t.Fatal(err)
			}
			img, err := e.screenshot(win, filepath.Join(art, "05-no-sheet.png"))
			// The text has the command block's colour too, not 4000 pixels.
			if err == nil && colorCount(img, colCommand)[colCommand] < 4000 {
				break
			}
			if attempt == 4 {
				h.fatalf("Esc did not close the sheet (see 05-no-sheet.png)")
			}
			e.run(10*time.Second, "xdotool", "mousemove", "--window", win, "700", "720", "click", "1")
		}
		const extra = 24
		for range extra {
			srv.CreateSession()
		}
		h.waitView(step, "the extra sessions listed", func(v *service.View) bool {
			for _, g := range v.Live {
				if g.Gateway == gwName && len(g.Sessions) > extra {
					return true
				}
			}
			return false
		})
		before := h.waitScreen(win, "the long Sessions list", "05-before-scroll.png", func(s screen) bool { return s.exact[colConnected] >= 30 })
		// Wheel down over the Sessions pane (left) and over the page.
		for _, at := range [][2]string{{"200", "500"}, {"640", "700"}} {
			if _, err := e.run(10*time.Second, "xdotool", "mousemove", "--window", win, at[0], at[1], "click", "--repeat", "15", "--delay", "30", "5"); err != nil {
				t.Fatalf("scrolling with the wheel: %v", err)
			}
		}
		var after image.Image
		if err := poll(step, 250*time.Millisecond, func() (bool, error) {
			i, err := e.screenshot(win, filepath.Join(art, "05-scrolled.png"))
			if err != nil {
				return false, nil
			}
			after = i
			return changedPixels(before, i) > 2000, nil
		}); err != nil {
			h.fatalf("the window did not scroll: %d pixels changed after 30 wheel clicks (see 05-before-scroll.png, 05-scrolled.png)", changedPixels(before, after))
		}
		t.Logf("scrolled: %d pixels changed", changedPixels(before, after))
		cmd := "dd if=/dev/zero of=/dev/sda"
		srq, choice, key := h.request(cmd)
		h.waitScreen(win, "the pending approval sheet in the scrolled window", "06-scrolled-approval.png", func(s screen) bool {
			return s.exact[colCommand] >= 4000 && s.exact[colPrimary] >= 1500 && s.exact[colDanger] >= 800
		})
		h.ocr("06-scrolled-approval.png", []string{"Allow once", "Deny"}, []string{cmd})
		n, err := notes.waitFor(step, "for "+key, func(n note) bool { return n.Key == key && n.Open })
		if err != nil {
			h.fatalf("%v", err)
		}
		h.invokeUntilAnswered(n.ID, key, "deny")
		h.waitChoice(choice, srq, cmd, "deny")
		h.waitResolved(key, "deny", "notification")
		sum.add("E scrolled", fmt.Sprintf("sheet of an approval arriving while scrolled on screen; %d sessions listed", extra+1))
	})

	// One name per session: its title in the Sessions panel and the quick
	// prompt (on the gateway card while it runs), and in the Session column of every
	// History row of its approvals; never its live or stored id.
	t.Run("session names and history", func(t *testing.T) {
		h.t = t
		if win == "" {
			t.Skip("no window")
		}
		const title = sessionTitle
		name := h.titled(stored, title)
		// Back to the top of the left pane (the last scenario scrolled it).
		e.run(10*time.Second, "xdotool", "mousemove", "--window", win, "200", "300", "click", "--repeat", "30", "--delay", "30", "4")
		// The card lists what runs now: this idle session is named in the
		// Sessions panel and the quick prompt.
		// Where each occurrence is: under the Gateways heading (the card),
		// under Sessions (the panel) or under Quick prompt, in the left
		// pane. Read until the panel and the quick prompt both show it
		// (the pane may still be scrolling back; the right pane's strip
		// and sheet name it too, so a count alone is not enough).
		var where map[string]int
		headings := false
		placed := func(ws words) bool {
			gx, gy, okG := ws.find("gateways")
			_, sy, okS := ws.find("sessions")
			_, qy, okQ := ws.find("quick")
			where = map[string]int{}
			if headings = okG && okS && okQ && gy < sy && sy < qy; !headings {
				return false
			}
			for _, p := range ws.phrase(name) {
				switch {
				case p.X > gx+300: // the right pane
				case p.Y > gy && p.Y < sy:
					where["card"]++
				case p.Y > sy && p.Y < qy:
					where["panel"]++
				case p.Y > qy:
					where["quick prompt"]++
				}
			}
			return where["panel"] > 0 && where["quick prompt"] > 0
		}
		var seen words
		if err := poll(step, 0, func() (bool, error) {
			seen = h.waitRead(win, "30-names.png", func(ws words) bool { return strings.Count(strings.Join(ws.text, " "), name) >= 2 })
			return placed(seen), nil
		}); err != nil && !headings {
			h.fatalf("the headings Gateways, Sessions and Quick prompt not read in order in 30-names.png: %q", strings.Join(seen.text, " "))
		}
		words := seen
		flat := strings.Join(words.text, " ")
		for _, id := range []string{live, stored} {
			if strings.Contains(flat, strings.ToLower(id)) {
				t.Errorf("the live view shows the session's id %s, not only its name (see 30-names.png)", id)
			}
		}
		if where["card"] > 0 {
			t.Errorf("the gateway card lists the idle session %q: it lists what runs now (see 30-names.png)", title)
		}
		for _, part := range []string{"panel", "quick prompt"} {
			if where[part] == 0 {
				t.Errorf("the %s does not show the session's name %q (read: %v; see 30-names.png)", part, title, where)
			}
		}
		// The History, by its tab.
		x, y, ok := words.find("history")
		if !ok {
			h.fatalf("no History tab read in 30-names.png")
		}
		if _, err := e.run(10*time.Second, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1"); err != nil {
			t.Fatal(err)
		}
		// Its rows come a moment after the tab: wait for the answers of
		// the earlier scenarios, by where they came from. Every one was
		// an approval of this session.
		hist := h.waitWords(win, "31-history.png", func(text string) bool {
			ws := strings.Fields(text)
			return slices.Contains(ws, "resolved") && slices.Contains(ws, "tray") && slices.Contains(ws, "window") && strings.Contains(text, name)
		})
		text := strings.Join(hist.text, " ")
		for _, id := range []string{live, stored} {
			if strings.Contains(text, strings.ToLower(id)) {
				t.Errorf("the History shows the session's id %s (see 31-history.png)", id)
			}
		}
		if _, _, ok := hist.find("session"); !ok {
			t.Errorf("the History has no Session column (see 31-history.png)")
		}
		docs.shot(t, "31-history.png", "docs/screenshots/history.png")
		names := hist.phrase(name)
		rows := 0
		for i, w := range hist.text {
			if w != "resolved" {
				continue
			}
			rows++
			if !slices.ContainsFunc(names, func(p image.Point) bool { return abs(p.Y-hist.at[i].Y) <= 8 }) {
				t.Errorf("the History row at y=%d does not name its session %q (see 31-history.png)", hist.at[i].Y, title)
			}
		}
		if x, y, ok := hist.find("live"); ok {
			e.run(10*time.Second, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
		}
		sum.add("G names", fmt.Sprintf("%q on the card, the panel and the quick prompt (%v), and on %d of %d History rows; its ids nowhere (30-names.png, 31-history.png)", title, where, len(names), rows))
	})

	// Stock GNOME has no tray host: when the StatusNotifierWatcher leaves
	// the bus, the window says so, how to get a tray and what closing
	// does. Closing it then keeps Herald running (the default choice):
	// notifications still answer, a second launch reopens the window. The
	// note's "Got it" closes it (saved); a tray host appearing again ends
	// that dismissal. The quit half runs last ("no tray host, restarted").
	noTrayBaseline := 0
	t.Run("no tray host", func(t *testing.T) {
		h.t = t
		if win == "" {
			t.Skip("no window")
		}
		t0 := time.Now()
		// Other things may be amber too (a reconnecting gateway's dot):
		// the notice's border is what comes on top of them.
		img, err := e.screenshot(win, filepath.Join(art, "20-before.png"))
		if err != nil {
			t.Fatal(err)
		}
		before := colorCount(img, colAttention)[colAttention]
		noTrayBaseline = before
		if _, err := fakes.ReleaseName(watcherName); err != nil {
			t.Fatal(err)
		}
		noteShown := func(s screen) bool { return s.exact[colAttention] >= before+800 }
		noteGone := func(s screen) bool { return s.exact[colAttention] <= before+50 }
		h.waitScreen(win, "the no-tray notice", "20-no-tray.png", noteShown)
		h.ocr("20-no-tray.png", []string{"No tray on this desktop", "quit Herald", "Got"}, []string{"gnome-shell-extension-appindicator"})
		docs.shot(t, "20-no-tray.png", "docs/screenshots/no-tray.png")

		// Closing the window keeps Herald running: its window process
		// ends, Herald does not.
		h.closeByKey(win, herald.cmd.Process.Pid)
		if herald.exited() {
			h.fatalf("closing the window without a tray quit Herald (the choice was to keep it running): %v", herald.err)
		}
		cmd := "kubectl delete namespace prod"
		srq, choice, key := h.request(cmd)
		n, err := notes.waitFor(step, "for "+key, func(n note) bool { return n.Key == key && n.Open })
		if err != nil {
			h.fatalf("%v", err)
		}
		h.invokeUntilAnswered(n.ID, key, "deny")
		h.waitChoice(choice, srq, cmd, "deny")
		h.waitResolved(key, "deny", "notification")
		// The app menu (a second launch) opens it again, the note still up.
		second := e.start("herald-second-notray", launch.bin, startOpts{args: launch.args, env: heraldEnv, dir: base})
		select {
		case <-second.done:
			if second.err != nil {
				t.Errorf("the second launch exited with %v", second.err)
			}
		case <-time.After(step):
			h.fatalf("the second launch did not hand over to the running Herald and exit")
		}
		win = h.window()
		h.waitScreen(win, "the reopened window with the no-tray notice", "22-no-tray-reopened.png", noteShown)

		// "Got it" closes the note, for good (saved).
		h.clickUntil(win, "22-no-tray-words.png", "got", "the dismissal saved", func() bool {
			st, err := store.Load()
			return err == nil && st.TrayNoticeDismissed
		})
		h.waitScreen(win, "the no-tray notice dismissed", "23-no-tray-dismissed.png", noteGone)

		if err := requestName(fakes, watcherName); err != nil {
			t.Fatal(err)
		}
		if err := poll(step, 100*time.Millisecond, func() (bool, error) {
			st, err := store.Load()
			return err == nil && !st.TrayNoticeDismissed, nil
		}); err != nil {
			t.Errorf("a tray host appeared and the dismissal still holds in the settings")
		}
		h.waitScreen(win, "the notice gone with a tray host back", "21-tray-back.png", noteGone)
		sum.add("D no tray", fmt.Sprintf("notice shown without a StatusNotifierWatcher; window closed with Herald running, an approval answered from its notification, reopened by a second launch; notice dismissed and the dismissal ended by a tray host, in %s", since(t0)))
	})

	if rss, err := vmRSS(herald.cmd.Process.Pid); err == nil {
		sum.add("memory after", fmt.Sprintf("herald VmRSS %s after the three approvals", mib(rss)))
	}

	t.Run("window closed", func(t *testing.T) {
		h.t = t
		if win == "" {
			t.Skip("no window")
		}
		// Close the window: its process ends, and with it the web view and
		// every WebKit helper; the tray, notifications and push channel
		// stay in herald.
		closeWindow := func() {
			child := h.windowProcess()
			if child == 0 {
				h.fatalf("no window process (herald-window --window) in Herald's process group: %v", groupMembers(herald.cmd.Process.Pid))
			}
			if err := syscall.Kill(child, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := poll(step, 100*time.Millisecond, func() (bool, error) { return len(groupMembers(herald.cmd.Process.Pid)) == 1, nil }); err != nil {
				h.fatalf("the window's processes did not end: %v", groupMembers(herald.cmd.Process.Pid))
			}
		}
		closeWindow()
		closed := h.measure()
		sum.add("idle memory, window closed", closed.line)
		// Idle wake-ups with the window closed: context switches of every
		// herald thread over 30 s (an upper bound: one wake-up may switch
		// several threads), Go runtime included.
		pid := herald.cmd.Process.Pid
		before := ctxSwitches(pid)
		time.Sleep(30 * time.Second) // measuring real idle time, not waiting for a condition
		woke := ctxSwitches(pid) - before
		sum.add("idle wake-ups, window closed", fmt.Sprintf("%d context switches of herald's threads in 30 s (%.0f per minute)", woke, float64(woke)*2))
		ratio := float64(closed.pss) / float64(max(open.pss, 1))
		sum.add("footprint", fmt.Sprintf("window closed: PSS %s, RSS %s (%d process); window open: PSS %s, RSS %s (%d processes); closed/open PSS %.2f",
			mib(closed.pss), mib(closed.rss), closed.procs, mib(open.pss), mib(open.rss), open.procs, ratio))
		t.Logf("footprint: closed PSS %s (%.0f%% of open %s)", mib(closed.pss), 100*ratio, mib(open.pss))
		if closed.pss >= 60<<10 {
			t.Errorf("idle PSS with the window closed is %s, want under 60 MiB", mib(closed.pss))
		}
		// Herald is still live without its window: an approval is answered
		// from its notification.
		cmd := "terraform destroy -auto-approve"
		srq, choice, key := h.request(cmd)
		n, err := notes.waitFor(step, "for "+key, func(n note) bool { return n.Key == key && n.Open })
		if err != nil {
			h.fatalf("%v", err)
		}
		h.invokeUntilAnswered(n.ID, key, "deny")
		h.waitChoice(choice, srq, cmd, "deny")
		h.waitResolved(key, "deny", "notification")
		// A second launch hands over to the running Herald, which opens
		// its window, and exits.
		second := e.start("herald-second", launch.bin, startOpts{args: launch.args, env: heraldEnv, dir: base})
		select {
		case <-second.done:
			if second.err != nil {
				t.Errorf("the second launch exited with %v", second.err)
			}
		case <-time.After(step):
			h.fatalf("the second launch did not hand over to the running Herald and exit")
		}
		shown := h.window()
		h.waitScreen(shown, "the live view in the window the second launch opened", "19-second-launch.png", func(s screen) bool {
			return s.exact[colConnected] >= 30
		})
		// Ctrl+W hides the window: its process ends, after it sent its
		// place and size to Herald, which remembers them in the settings.
		h.closeByKey(shown, herald.cmd.Process.Pid)
		if err := poll(step, 100*time.Millisecond, func() (bool, error) {
			st, err := store.Load()
			return err == nil && st.Window != nil && st.Window.Width >= app.MinWindowWidth && st.Window.Height >= app.MinWindowHeight, nil
		}); err != nil {
			t.Errorf("Ctrl+W did not leave the window's size in the settings: %v", err)
		}
		// "Open Herald" in the tray starts the window again.
		if tray != nil {
			o, err := tray.findEntry(step, "“Open Herald”", func(_, c menuNode) bool { return c.Label == "Open Herald" })
			if err != nil {
				t.Fatal(err)
			}
			if err := tray.click(o.ID); err != nil {
				t.Fatal(err)
			}
			again := h.window()
			h.waitScreen(again, "the live view in the reopened window", "20-reopened.png", func(s screen) bool {
				return s.exact[colConnected] >= 30
			})
		}
	})

	// The gateway restarted twice within a minute: Herald is connected
	// again soon after each (the fake keeps accepting, so from the
	// restart to Herald's connected state on the control socket).
	t.Run("gateway restarted twice", func(t *testing.T) {
		h.t = t
		var figs []string
		for i := 1; i <= 2; i++ {
			t0 := time.Now()
			srv.Restart()
			v := h.waitView(step, fmt.Sprintf("reconnected after restart %d", i), func(v *service.View) bool {
				for _, g := range v.Gateways {
					if g.Gateway == gwName && g.State == source.StateConnected && g.ConnectedAt.After(t0) {
						return true
					}
				}
				return false
			})
			seen := time.Since(t0)
			for _, g := range v.Gateways {
				if g.Gateway == gwName {
					d := g.ConnectedAt.Sub(t0)
					figs = append(figs, fmt.Sprintf("restart %d: connected %s after (seen on the socket %s, dials %d)",
						i, d.Round(time.Millisecond), seen.Round(time.Millisecond), g.Dials))
					t.Logf("restart %d: Herald connected %s after the gateway accepted again; seen over the control socket after %s", i, d.Round(time.Millisecond), seen.Round(time.Millisecond))
				}
			}
		}
		sum.add("F restarts", strings.Join(figs, "; "))
	})

	t.Run("quit", func(t *testing.T) {
		h.t = t
		if tray == nil {
			t.Skip("no tray")
		}
		// With every approval answered, the menu says so (disabled).
		if m, err := tray.findEntry(step, "“No approvals pending”", func(_, c menuNode) bool { return c.Label == "No approvals pending" }); err != nil {
			t.Errorf("%v", err)
		} else if m.Enabled {
			t.Errorf("“No approvals pending” is clickable")
		}
		q, err := tray.findEntry(step, "“Quit”", func(_, c menuNode) bool { return c.Label == "Quit" })
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if err := tray.click(q.ID); err != nil {
			t.Fatal(err)
		}
		select {
		case <-herald.done:
			if herald.err != nil {
				t.Errorf("Herald exited with %v after Quit", herald.err)
			}
		case <-time.After(step):
			h.fatalf("Herald did not exit within %s of Quit", step)
		}
		sum.add("quit", fmt.Sprintf("exited %s after the tray's Quit (%v)", since(t0), herald.err))
	})

	// The quit half, last (it ends Herald): without a tray host at start
	// (the dismissal above ended when the tray host came back, so the note
	// shows again), the user picks "quit Herald" and dismisses the note;
	// closing the window quits Herald cleanly. Started again, still
	// without a tray, the note stays dismissed and closing quits again.
	t.Run("no tray host, restarted", func(t *testing.T) {
		if !herald.exited() {
			t.Skip("the first Herald is still running")
		}
		t0 := time.Now()
		if _, err := fakes.ReleaseName(watcherName); err != nil {
			t.Fatal(err)
		}
		start := func(name string) *harness {
			h2 := *h
			h2.t = t
			h2.herald = e.start(name, launch.bin, startOpts{args: launch.args, env: heraldEnv, dir: base})
			return &h2
		}
		shown := func(s screen) bool { return s.exact[colAttention] >= noTrayBaseline+800 }
		h2 := start("herald-notray")
		w2 := h2.window()
		img := h2.waitScreen(w2, "the no-tray notice after a restart without a tray", "24-no-tray-restart.png", shown)
		withNote := colorCount(img, colAttention)[colAttention]
		h2.clickUntil(w2, "24-no-tray-words.png", "quit", "the quit choice saved", func() bool {
			st, err := store.Load()
			return err == nil && st.QuitWithoutTray
		})
		h2.clickUntil(w2, "24-no-tray-words.png", "got", "the dismissal saved", func() bool {
			st, err := store.Load()
			return err == nil && st.TrayNoticeDismissed
		})
		h2.waitScreen(w2, "the dismissed notice", "25-no-tray-dismissed.png", func(s screen) bool {
			return s.exact[colAttention] <= withNote-800
		})
		// The choice stays reachable, in the header.
		dismissed := func(text string) bool {
			return strings.Contains(text, "quit when the window closes") && !strings.Contains(text, "no tray on this desktop")
		}
		h2.waitWords(w2, "25-no-tray-dismissed-words.png", dismissed)
		h2.closeToExit(w2)

		h3 := start("herald-notray-again")
		w3 := h3.window()
		h3.waitScreen(w3, "the live view after a restart", "26-no-tray-stays-dismissed.png", func(s screen) bool {
			return s.exact[colConnected] >= 30 && s.exact[colAttention] <= withNote-800
		})
		h3.waitWords(w3, "26-no-tray-stays-dismissed-words.png", dismissed)
		h3.closeToExit(w3)
		sum.add("D no tray quit", fmt.Sprintf("restarted without a tray host: notice shown, quit chosen and notice dismissed, closing quit Herald (exit 0); started again, notice still dismissed and closing quit again, in %s", since(t0)))
	})

	// The first run: Herald started with no settings at all (a config
	// directory of its own, empty) welcomes, says what it does, which
	// gateway to add on which port and how to try it without Hermes; its
	// "Add gateway" opens the form. Last, when every other Herald is gone
	// (a second one would hand over to it), with a tray host again.
	t.Run("first run", func(t *testing.T) {
		if !herald.exited() {
			herald.stop(5 * time.Second)
		}
		if !e.hasOwner(watcherName) {
			if err := requestName(fakes, watcherName); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		cfg := e.dir("config-first-run")
		h4 := *h
		h4.t = t
		h4.herald = e.start("herald-first-run", launch.bin, startOpts{
			args: launch.args,
			env:  e.childEnv("HERALD_CONFIG_DIR="+cfg, "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1"),
			dir:  base,
		})
		defer h4.herald.stop(5 * time.Second)
		w := h4.window()
		// The welcome's "Add gateway" is the one primary (blue) button.
		img := h4.waitScreen(w, "the welcome", "40-first-run.png", func(s screen) bool { return s.exact[colPrimary] >= 1500 })
		welcome := func(text string) bool {
			return strings.Contains(text, "welcome to herald") && strings.Contains(text, "dashboard gateway") && strings.Contains(text, "port 9119") &&
				strings.Contains(text, "api server") && strings.Contains(text, "herald watch") && strings.Contains(text, "demo")
		}
		ws := h4.waitWords(w, "40-first-run.png", welcome)
		text := strings.Join(ws.text, " ")
		for _, absent := range []string{"quick prompt", "no approvals are waiting"} {
			if strings.Contains(text, absent) {
				t.Errorf("the first run shows %q (see 40-first-run.png)", absent)
			}
		}
		docs.shot(t, "40-first-run.png", "docs/screenshots/first-run.png")
		// Its button (white on blue, which tesseract does not read): the
		// primary colour under the header, where the active tab's border
		// is.
		at, n := colourCentre(img, colPrimary, 60)
		if n < 1500 {
			h4.fatalf("no primary button under the header in 40-first-run.png (%d pixels)", n)
		}
		if _, err := e.run(10*time.Second, "xdotool", "mousemove", "--window", w, strconv.Itoa(at.X), strconv.Itoa(at.Y), "click", "1"); err != nil {
			t.Fatal(err)
		}
		h4.waitWords(w, "41-first-run-form.png", func(text string) bool {
			return !strings.Contains(text, "welcome to herald") && strings.Contains(text, "sign-in") && strings.Contains(text, "dashboard gateway")
		})
		sum.add("H first run", fmt.Sprintf("empty settings: the welcome read (dashboard gateway on port 9119, API server, herald watch --demo), no quick prompt; its Add gateway opened the form; %s after exec", since(t0)))
	})
	docs.missing(t)
	sum.add("total", since(total))
}

// colourCentre is the centre of the pixels of colour rgb at or below y
// minY (a button's face), and how many there are.
func colourCentre(img image.Image, rgb uint32, minY int) (image.Point, int) {
	var sum image.Point
	n := 0
	b := img.Bounds()
	for y := max(b.Min.Y, minY); y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if (r>>8)<<16|(g>>8)<<8|bl>>8 == rgb {
				sum = sum.Add(image.Pt(x, y))
				n++
			}
		}
	}
	if n == 0 {
		return image.Point{}, 0
	}
	return sum.Div(n), n
}

// titled gives the followed session a title on the gateway and waits
// until the app names it by it (its one name on every surface). It
// returns the name in lower case, as tesseract reads it.
func (h *harness) titled(stored, title string) string {
	h.t.Helper()
	t0 := time.Now()
	if err := h.srv.SetTitle(h.live, title); err != nil {
		h.t.Fatal(err)
	}
	// The name the app gives the session (its title, else its short
	// id), as the control socket reports it, from a listing taken after
	// the title was set: the title alone also comes in the session's
	// events, with the last listing (its status) older than that.
	var name string
	h.waitView(step, "the gateway listing the session's title", func(v *service.View) bool {
		for _, g := range v.Live {
			for _, s := range g.Sessions {
				if g.Gateway == gwName && s.ID == h.live && s.DisplayName() == title && g.At.After(t0) {
					name = strings.ToLower(v.Names().Of(gwName, h.live, stored, ""))
					return true
				}
			}
		}
		return false
	})
	if name != strings.ToLower(title) {
		h.t.Fatalf("the app names the session %q, want its title %q", name, title)
	}
	return name
}

// sheetNames reads the window (artifacts/file) until the session's name
// shows on the approval sheet (the right pane) as in the left pane (the
// card, the panel, the quick prompt), and checks that none of its ids
// shows.
func (h *harness) sheetNames(win, file, name string, ids ...string) {
	h.t.Helper()
	ws := h.waitWords(win, file, func(text string) bool { return strings.Count(text, name) >= 3 })
	gx, _, ok := ws.find("gateways")
	if !ok {
		h.fatalf("no Gateways heading read in %s", file)
	}
	var sheet, left int
	for _, p := range ws.phrase(name) {
		if p.X > gx+300 {
			sheet++
		} else {
			left++
		}
	}
	if sheet == 0 || left == 0 {
		h.t.Errorf("the session's name %q read %d times on the sheet and %d times left of it, want both (see %s)", name, sheet, left, file)
	}
	flat := strings.Join(ws.text, " ")
	for _, id := range ids {
		if strings.Contains(flat, strings.ToLower(id)) {
			h.t.Errorf("the window shows the session's id %s beside its name (see %s)", id, file)
		}
	}
}

// clickUntil reads the window (artifacts/name) until a word starting with
// w is on it (tesseract may read "Got it" as "gotit"), clicks it, and
// again (read afresh) until done holds.
func (h *harness) clickUntil(win, name, w, what string, done func() bool) {
	h.t.Helper()
	starts := func(t string) bool { return strings.HasPrefix(t, w) }
	for attempt := 1; attempt <= 3; attempt++ {
		ws := h.waitWords(win, name, func(text string) bool { return slices.ContainsFunc(strings.Fields(text), starts) })
		i := slices.IndexFunc(ws.text, starts)
		x, y := ws.at[i].X, ws.at[i].Y
		if _, err := h.e.run(10*time.Second, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1"); err != nil {
			h.t.Fatal(err)
		}
		if poll(5*time.Second, 100*time.Millisecond, func() (bool, error) { return done(), nil }) == nil {
			return
		}
		h.t.Logf("click %d on %q at %d,%d: no %s yet; retrying", attempt, w, x, y, what)
	}
	h.fatalf("three clicks on %q did not bring %s (see %s)", w, what, name)
}

// closeToExit presses Ctrl+W in the window until Herald itself exits (no
// tray, and the user chose to quit then), and checks it exited cleanly.
func (h *harness) closeToExit(win string) {
	h.t.Helper()
	for attempt := 1; attempt <= 3; attempt++ {
		if _, err := h.e.run(10*time.Second, "xdotool", "windowfocus", "--sync", win); err != nil {
			h.t.Logf("focusing the window: %v", err)
		}
		time.Sleep(time.Second) // a person's key comes after the focus settled
		h.e.run(10*time.Second, "xdotool", "key", "--clearmodifiers", "ctrl+w")
		select {
		case <-h.herald.done:
			if h.herald.err != nil {
				h.t.Errorf("Herald exited with %v after its window closed", h.herald.err)
			}
			return
		case <-time.After(10 * time.Second):
		}
		h.t.Logf("Ctrl+W press %d did not end Herald; clicking into the page and retrying", attempt)
		h.e.run(10*time.Second, "xdotool", "mousemove", "--window", win, "700", "720", "click", "1")
	}
	h.fatalf("closing the window without a tray did not quit Herald (processes %v)", groupMembers(h.herald.cmd.Process.Pid))
}

// harness bundles what the scenarios share.
type harness struct {
	t      *testing.T
	e      *env
	srv    *hermestest.Server
	notes  *notifyServer
	herald *proc
	live   string
	sock   string
}

// fatalf fails with the app's log attached.
func (h *harness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf(format+"\n--- herald log (tail) ---\n%s", append(args, h.herald.tail(3000))...)
}

// view asks the running app for its view over the control socket.
func (h *harness) view() (*service.View, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := service.Control(ctx, h.sock, service.ControlRequest{Op: "view"})
	if err != nil {
		return nil, err
	}
	return r.View, nil
}

// waitView polls the control socket until cond holds.
func (h *harness) waitView(timeout time.Duration, what string, cond func(*service.View) bool) *service.View {
	h.t.Helper()
	var last *service.View
	var lastErr error
	err := poll(timeout, 50*time.Millisecond, func() (bool, error) {
		if h.herald.exited() {
			return false, fmt.Errorf("Herald exited: %v", h.herald.err)
		}
		v, err := h.view()
		if err != nil {
			lastErr = err
			return false, nil
		}
		last = v
		return cond(v), nil
	})
	if err != nil {
		h.fatalf("waiting for %s: %v (last control error: %v; last view: %+v)", what, err, lastErr, last)
	}
	return last
}

// request makes the agent ask for approval and returns the gateway's
// request id, its answer channel and the app's key for it.
func (h *harness) request(cmd string) (srq string, choice <-chan string, key string) {
	h.t.Helper()
	srq, choice, err := h.srv.RequestApproval(h.live, hermestest.ApprovalSpec{Command: cmd})
	if err != nil {
		h.t.Fatal(err)
	}
	v := h.waitView(step, "approval "+srq+" to be pending in Herald", func(v *service.View) bool {
		return findReq(v.Approvals, srq) != nil
	})
	r := findReq(v.Approvals, srq)
	h.t.Logf("approval %s (%q) pending as %s, choices %v", srq, cmd, r.Key, r.Choices)
	return srq, choice, r.Key
}

func findReq(rs []approval.Request, srq string) *approval.Request {
	for i := range rs {
		if rs[i].RequestID == srq {
			return &rs[i]
		}
	}
	return nil
}

func findKey(rs []approval.Request, key string) *approval.Request {
	for i := range rs {
		if rs[i].Key == key {
			return &rs[i]
		}
	}
	return nil
}

// waitChoice waits for the gateway's agent to receive the answer.
func (h *harness) waitChoice(ch <-chan string, srq, cmd, want string) {
	h.t.Helper()
	select {
	case got := <-ch:
		if got != want {
			h.fatalf("the gateway received %q for %s, want %q", got, srq, want)
		}
	case <-time.After(step):
		h.fatalf("the gateway received no answer for %s within %s", srq, step)
	}
	for _, a := range h.srv.Answers() {
		if a.RequestID == srq {
			if a.Choice != want || a.Command != cmd {
				h.t.Errorf("gateway recorded %+v, want choice %q for %q", a, want, cmd)
			}
			h.t.Logf("gateway recorded %q for %s (%q) via %s", a.Choice, srq, a.Command, a.Via)
			return
		}
	}
	h.t.Errorf("srv.Answers() has no answer for %s: %+v", srq, h.srv.Answers())
}

// waitResolved waits for the app to show the request as confirmed.
func (h *harness) waitResolved(key, choice, surface string) {
	h.t.Helper()
	v := h.waitView(step, key+" resolved", func(v *service.View) bool {
		r := findKey(v.Recent, key)
		return r != nil && r.State == approval.StateResolved
	})
	r := findKey(v.Recent, key)
	if r.Outcome.Choice != choice || r.Outcome.Surface != surface {
		h.t.Errorf("%s resolved with %q from %q, want %q from %q", key, r.Outcome.Choice, r.Outcome.Surface, choice, surface)
	}
	if findKey(v.Approvals, key) != nil {
		h.t.Errorf("%s is still listed as live", key)
	}
}

// invokeUntilAnswered presses a notification's action button, again if
// the app did not take it. Wails files a notification under its D-Bus id
// only once Notify has returned, and drops an ActionInvoked that comes
// before (no person is that fast, a test can be); once it took one, it
// forgets the notification before answering, so a repeat is dropped and
// cannot answer twice.
func (h *harness) invokeUntilAnswered(id uint32, key, action string) {
	h.t.Helper()
	for attempt := 1; attempt <= 20; attempt++ {
		if err := h.notes.invoke(id, action); err != nil {
			h.t.Fatal(err)
		}
		if h.answeredWithin(key, 500*time.Millisecond) {
			return
		}
		h.t.Logf("note: ActionInvoked(%d, %q) #%d was not taken within 500ms; sending it again", id, action, attempt)
	}
	h.fatalf("20 ActionInvoked(%d, %q) over 10 s did not answer %s", id, action, key)
}

// clickUntilAnswered clicks the tray's "label" entry under the approval,
// again (with a fresh layout) if the menu was rebuilt under the click.
func (h *harness) clickUntilAnswered(tray *trayClient, key, cmd, label string) {
	h.t.Helper()
	for attempt := 1; attempt <= 3; attempt++ {
		m, err := tray.findEntry(step, "“"+label+"” under the approval", func(p, c menuNode) bool {
			return strings.Contains(p.Label, cmd) && strings.HasPrefix(p.Label, gwName+" · ") && c.Label == label
		})
		if err != nil {
			h.fatalf("%v", err)
		}
		if attempt == 1 {
			if top, err := tray.layout(); err == nil {
				h.t.Logf("tray menu:\n%s", top)
			}
		}
		if err := tray.click(m.ID); err != nil {
			h.t.Fatal(err)
		}
		if h.answeredWithin(key, 5*time.Second) {
			return
		}
		h.t.Logf("click %d on %q (id %d) was not taken; retrying", attempt, label, m.ID)
	}
	h.fatalf("three clicks on the tray's %q did not answer %s", label, key)
}

// pressUntilAnswered focuses the window and types the shortcut, again if
// the window was not ready for it.
func (h *harness) pressUntilAnswered(win, key, k string) {
	h.t.Helper()
	for attempt := 1; attempt <= 4; attempt++ {
		if _, err := h.e.run(10*time.Second, "xdotool", "windowfocus", "--sync", win); err != nil {
			h.t.Logf("focusing the window: %v", err)
		}
		// The window ignores shortcuts for 700 ms after its focus changes
		// (frontend/src/lib/keyguard.ts), as a person's key would be.
		time.Sleep(time.Second)
		if _, err := h.e.run(10*time.Second, "xdotool", "key", "--clearmodifiers", k); err != nil {
			h.t.Fatal(err)
		}
		if h.answeredWithin(key, 5*time.Second) {
			return
		}
		h.t.Logf("key press %d (%q) was not taken; clicking into the page and retrying", attempt, k)
		// Click an empty part of the page to give the web view focus.
		h.e.run(10*time.Second, "xdotool", "mousemove", "--window", win, "700", "720", "click", "1")
	}
	h.fatalf("pressing %q in the window did not answer %s", k, key)
}

// answeredWithin reports whether the request left "pending" (answering
// or done) within d, as the control socket shows.
func (h *harness) answeredWithin(key string, d time.Duration) bool {
	err := poll(d, 50*time.Millisecond, func() (bool, error) {
		v, err := h.view()
		if err != nil {
			return false, nil
		}
		if r := findKey(v.Approvals, key); r != nil {
			return r.State != approval.StatePending, nil
		}
		return findKey(v.Recent, key) != nil, nil
	})
	return err == nil
}

// ctxSwitches sums the voluntary and involuntary context switches of
// every thread of pid.
func ctxSwitches(pid int) int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			for _, k := range []string{"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"} {
				if v, ok := strings.CutPrefix(l, k); ok {
					x, _ := strconv.Atoi(strings.TrimSpace(v))
					n += x
				}
			}
		}
	}
	return n
}

// windowProcess finds the window process (herald-window --window) in
// Herald's process group, or 0.
func (h *harness) windowProcess() int {
	for pid := range groupMembers(h.herald.cmd.Process.Pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(b), "--window") {
			return pid
		}
	}
	return 0
}

// window finds the app's top-level window.
func (h *harness) window() string {
	h.t.Helper()
	var id string
	err := poll(step, 200*time.Millisecond, func() (bool, error) {
		out, err := h.e.run(5*time.Second, "xdotool", "search", "--onlyvisible", "--name", "^Herald$")
		if err != nil {
			return false, nil
		}
		ids := strings.Fields(out)
		if len(ids) == 0 {
			return false, nil
		}
		id = ids[len(ids)-1]
		return true, nil
	})
	if err != nil {
		h.fatalf("no visible window titled Herald: %v", err)
	}
	return id
}

// screen is what a screenshot shows, in colours.
type screen struct {
	exact     map[uint32]int // pixels of the col* colours
	blue, red int            // bluish and reddish pixels of any shade
}

func (s screen) String() string {
	return fmt.Sprintf("%s blue=%d red=%d", fmtCounts(s.exact), s.blue, s.red)
}

// waitScreen takes window screenshots until the colours say the window
// shows what we wait for, and keeps the last one as artifacts/name.
func (h *harness) waitScreen(win, what, name string, ok func(screen) bool) image.Image {
	h.t.Helper()
	path := filepath.Join(h.e.art, name)
	var img image.Image
	var counts screen
	var lastErr error
	err := poll(step, 250*time.Millisecond, func() (bool, error) {
		if h.herald.exited() {
			return false, fmt.Errorf("Herald exited: %v", h.herald.err)
		}
		i, err := h.e.screenshot(win, path)
		if err != nil {
			lastErr = err
			return false, nil
		}
		img = i
		counts.exact = colorCount(i, colCommand, colPrimary, colDanger, colConnected, colAttention)
		counts.blue, counts.red = hueCounts(i)
		return ok(counts), nil
	})
	if err != nil {
		h.fatalf("the window never showed %s: %v (screenshot error %v; colour counts %s; see %s)", what, err, lastErr, counts, path)
	}
	h.t.Logf("window shows %s (colour counts %s): %s", what, counts, path)
	return img
}

func fmtCounts(n map[uint32]int) string {
	names := map[uint32]string{colCommand: "command", colPrimary: "primary", colDanger: "danger", colConnected: "connected", colAttention: "attention"}
	var parts []string
	for c, k := range n {
		parts = append(parts, fmt.Sprintf("%s=%d", names[c], k))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// ocr reads a screenshot with tesseract, when installed (enlarged three
// times, which it needs for 14 px text): every text of must has to
// appear; texts of soft are only reported when missing (tesseract may
// misread light-on-dark monospace).
func (h *harness) ocr(name string, must, soft []string) {
	h.t.Helper()
	if _, err := exec.LookPath("tesseract"); err != nil {
		h.t.Logf("tesseract not installed (Debian package tesseract-ocr): not reading %s", name)
		return
	}
	path := filepath.Join(h.e.art, name)
	f, err := os.Open(path)
	if err != nil {
		h.t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		h.t.Fatal(err)
	}
	big := filepath.Join(h.e.base, "ocr-"+name)
	o, err := os.Create(big)
	if err != nil {
		h.t.Fatal(err)
	}
	png.Encode(o, upscaleGray(img, 3))
	o.Close()
	out, err := h.e.run(60*time.Second, "tesseract", "--dpi", "300", big, "stdout")
	if err != nil {
		h.t.Errorf("reading %s: %v", name, err)
		return
	}
	os.WriteFile(strings.TrimSuffix(path, ".png")+".txt", []byte(out), 0o644)
	flat := strings.ToLower(strings.Join(strings.Fields(out), " "))
	for _, w := range must {
		if !strings.Contains(flat, strings.ToLower(w)) {
			h.t.Errorf("%s does not read %q; tesseract read:\n%s", name, w, out)
		}
	}
	for _, w := range soft {
		if !strings.Contains(flat, strings.ToLower(w)) {
			h.t.Logf("note: tesseract did not read %q in %s", w, name)
		}
	}
	h.t.Logf("%s reads as expected (%s)", name, strings.Join(must, ", "))
}

// footprint is the memory of Herald and every process it started.
type footprint struct {
	line     string
	pss, rss int // kB, summed over the process group
	procs    int
}

// idleMemory waits until the app's memory settles and reports it.
func (h *harness) idleMemory() string { return h.measure().line }

// measure waits until the app's memory settles and sums it over the
// process group (herald, the window process and its WebKit helpers).
func (h *harness) measure() footprint {
	h.t.Helper()
	pid := h.herald.cmd.Process.Pid
	var samples []int
	settled := poll(30*time.Second, 250*time.Millisecond, func() (bool, error) {
		kb, err := vmRSS(pid)
		if err != nil {
			return false, err
		}
		samples = append(samples, kb)
		if len(samples) < 20 {
			return false, nil
		}
		w := samples[len(samples)-20:] // the last 5 s
		lo, hi := w[0], w[0]
		for _, s := range w {
			lo, hi = min(lo, s), max(hi, s)
		}
		return float64(hi-lo) <= 0.01*float64(hi), nil
	})
	rss, _ := vmRSS(pid)
	var parts []string
	totalRSS, totalPSS := 0, 0
	members := groupMembers(pid)
	pids := make([]int, 0, len(members))
	for p := range members {
		pids = append(pids, p)
	}
	sort.Ints(pids)
	for _, p := range pids {
		r, err := vmRSS(p)
		if err != nil {
			continue
		}
		totalRSS += r
		totalPSS += pss(p)
		if p != pid {
			parts = append(parts, fmt.Sprintf("%s %s", members[p], mib(r)))
		}
	}
	note := ""
	if settled != nil {
		note = " (still moving after 30 s)"
	}
	line := fmt.Sprintf("herald (pid %d) VmRSS %s (%d kB)%s; with its children [%s]: RSS sum %s, PSS sum %s",
		pid, mib(rss), rss, note, strings.Join(parts, ", "), mib(totalRSS), mib(totalPSS))
	return footprint{line: line, pss: totalPSS, rss: totalRSS, procs: len(pids)}
}

// buildBinary builds the frontend and the desktop binary as a release
// would (see the Makefile), unless HERALD_E2E_BINARY names one.
func buildBinary(t *testing.T, base, art string, sum *summary) string {
	t.Helper()
	if p := os.Getenv("HERALD_E2E_BINARY"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		sum.add("build", "skipped: HERALD_E2E_BINARY="+abs)
		return abs
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	build := func(name string, timeout time.Duration, dir, bin string, args ...string) {
		t.Helper()
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		logPath := filepath.Join(art, name+".log")
		lf, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer lf.Close()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Run(); err != nil {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("%s (%s %s in %s) failed: %v\n%s", name, bin, strings.Join(args, " "), dir, err, tailString(string(b), 4000))
		}
		sum.add(name, fmt.Sprintf("%s %s: %s", bin, strings.Join(args, " "), since(t0)))
	}
	if os.Getenv("HERALD_E2E_SKIP_FRONTEND") != "1" {
		fe := filepath.Join(root, "frontend")
		if _, err := os.Stat(filepath.Join(fe, "node_modules")); err != nil {
			build("npm-ci", 10*time.Minute, fe, "npm", "ci", "--no-audit", "--no-fund")
		}
		build("npm-build", 5*time.Minute, fe, "npm", "run", "build")
	}
	// Two programs, as `make build` makes them: herald (no GTK, no WebKit:
	// tray, notifications, push channels) starts herald-window (the web
	// view) next to it while the window is open.
	out := filepath.Join(base, "herald")
	build("go-build", 15*time.Minute, root, "go", "build", "-trimpath", "-o", out, ".")
	build("go-build-window", 15*time.Minute, root, "go", "build", "-tags", "desktop,production,webkit2_41", "-trimpath", "-o", filepath.Join(base, "herald-window"), ".")
	return out
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

// summary collects the numbers a run reports: logged, printed as plain
// lines and written to artifacts/summary.txt.
type summary struct {
	t     *testing.T
	lines []string
}

func (s *summary) add(what, v string) {
	line := fmt.Sprintf("%-15s %s", what+":", v)
	s.lines = append(s.lines, line)
	s.t.Log(line)
	fmt.Println("HERALD-E2E " + line)
}

func (s *summary) write(path string) {
	os.WriteFile(path, []byte(strings.Join(s.lines, "\n")+"\n"), 0o644)
}

// closeByKey presses Ctrl+W in the window, as a person would (focus first;
// the page may need a click to take keys), until the window process of
// Herald (process group pgid) has ended.
func (h *harness) closeByKey(win string, pgid int) {
	h.t.Helper()
	for attempt := 1; attempt <= 3; attempt++ {
		if _, err := h.e.run(10*time.Second, "xdotool", "windowfocus", "--sync", win); err != nil {
			h.t.Logf("focusing the window: %v", err)
		}
		time.Sleep(time.Second) // a person's key comes after the focus settled
		h.e.run(10*time.Second, "xdotool", "key", "--clearmodifiers", "ctrl+w")
		if poll(5*time.Second, 100*time.Millisecond, func() (bool, error) { return len(groupMembers(pgid)) == 1, nil }) == nil {
			return
		}
		h.t.Logf("Ctrl+W press %d was not taken; clicking into the page and retrying", attempt)
		h.e.run(10*time.Second, "xdotool", "mousemove", "--window", win, "700", "720", "click", "1")
	}
	h.fatalf("Ctrl+W did not close the window: processes %v", groupMembers(pgid))
}

// changedPixels counts the pixels two screenshots differ in (all of them
// when their sizes differ).
func changedPixels(a, b image.Image) int {
	if a == nil || b == nil || a.Bounds() != b.Bounds() {
		if b != nil {
			return b.Bounds().Dx() * b.Bounds().Dy()
		}
		return 0
	}
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				n++
			}
		}
	}
	return n
}

// words is what tesseract read in a screenshot: the words, lower-cased,
// and the centre of each in window pixels.
type words struct {
	text []string
	at   []image.Point
}

// find is the centre of the first word w (lower case).
func (ws words) find(w string) (x, y int, ok bool) {
	for i, t := range ws.text {
		if t == w {
			return ws.at[i].X, ws.at[i].Y, true
		}
	}
	return 0, 0, false
}

// phrase is where the words of p (lower case, single spaces) are read
// one after another: the centre of the first of them, each time.
func (ws words) phrase(p string) []image.Point {
	want := strings.Fields(p)
	var out []image.Point
	for i := 0; i+len(want) <= len(ws.text); i++ {
		if slices.Equal(ws.text[i:i+len(want)], want) {
			out = append(out, ws.at[i])
		}
	}
	return out
}

func abs(n int) int { return max(n, -n) }

// waitWords reads window screenshots (artifacts/name) with tesseract until
// ok holds for the text read (lower case, single spaces).
func (h *harness) waitWords(win, name string, ok func(string) bool) words {
	h.t.Helper()
	return h.waitRead(win, name, func(ws words) bool { return ok(strings.Join(ws.text, " ")) })
}

// waitRead is waitWords for a condition on where words are read, too.
func (h *harness) waitRead(win, name string, ok func(words) bool) words {
	h.t.Helper()
	if _, err := exec.LookPath("tesseract"); err != nil {
		h.t.Skip("tesseract not installed (Debian package tesseract-ocr)")
	}
	path := filepath.Join(h.e.art, name)
	var last words
	err := poll(step, 500*time.Millisecond, func() (bool, error) {
		img, err := h.e.screenshot(win, path)
		if err != nil {
			return false, nil
		}
		big := filepath.Join(h.e.base, "ocr-"+name)
		o, err := os.Create(big)
		if err != nil {
			return false, err
		}
		png.Encode(o, upscaleGray(img, 3))
		o.Close()
		out, err := h.e.run(60*time.Second, "tesseract", "--dpi", "300", big, "stdout", "tsv")
		if err != nil {
			return false, nil
		}
		last = words{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Split(l, "\t")
			if len(f) < 12 || f[0] != "5" || strings.TrimSpace(f[11]) == "" {
				continue
			}
			n := make([]int, 4)
			for i := range n {
				n[i], _ = strconv.Atoi(f[6+i])
			}
			last.text = append(last.text, strings.ToLower(strings.TrimSpace(f[11])))
			last.at = append(last.at, image.Pt((n[0]+n[2]/2)/3, (n[1]+n[3]/2)/3))
		}
		os.WriteFile(strings.TrimSuffix(path, ".png")+".txt", []byte(strings.Join(last.text, " ")), 0o644)
		return ok(last), nil
	})
	if err != nil {
		h.fatalf("%s never read as expected: %v; tesseract read:\n%s", name, err, strings.Join(last.text, " "))
	}
	return last
}

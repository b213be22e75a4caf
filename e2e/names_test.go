//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/herald-desktop/herald/app"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/hermespeer"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/service"
)

// TestDesktopNames is the window a new user reads, against the REAL
// Hermes 0.19.0 dashboard gateway and API server (../shared/hermes-peer):
// three idle sessions of another client are three one-line rows and one
// explanation; the quick prompt keeps its target while its gateway drops
// and returns; a wrong run id is refused beside Follow run ID within 1 s,
// with what was typed kept; one session and one run are named the same in
// the window, the tray, their notifications, the history and `herald
// pending`; every id form Herald shows is taken by Follow run ID and
// `herald stop`; at 1100×760 and 800×600 the sessions, the quick prompt
// and Follow run ID are on screen.
func TestDesktopNames(t *testing.T) {
	if os.Getenv("HERALD_E2E") != "1" {
		t.Skip("desktop end-to-end test skipped: set HERALD_E2E=1 (or run e2e/run.sh)")
	}
	for _, tool := range requiredTools {
		if _, err := exec.LookPath(tool.bin); err != nil {
			t.Fatalf("missing tool %s (Debian package %s); run e2e/run.sh to install it", tool.bin, tool.pkg)
		}
	}
	setSubreaper()
	sum := &summary{t: t}
	total := time.Now()
	root, err := filepath.Abs(artifactsDir)
	if err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(root, "names")
	os.RemoveAll(art)
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	docs := newDocShooter(art, namesShots)
	base := t.TempDir()
	bin := buildBinary(t, base, art, sum)

	// The real servers: the dashboard's /api/ws gateway and the API server.
	t0 := time.Now()
	ws := hermespeer.Start(t, hermespeer.WS, "0.19.0")
	api := hermespeer.Start(t, hermespeer.API, "0.19.0")
	sum.add("servers", fmt.Sprintf("real Hermes 0.19.0 gateway %s and API server %s up in %s", ws.Base, api.Base, since(t0)))

	e := &env{t: t, base: base, art: art}
	t.Cleanup(func() {
		e.stopAll()
		reapOrphans()
		sum.write(filepath.Join(art, "summary.txt"))
	})
	e.startXvfb()
	e.startBus()
	e.startKeyring()
	fakes := e.connect()
	notes, err := newNotifyServer(fakes)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := newWatcher(fakes)
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv("DBUS_SESSION_BUS_ADDRESS", e.busAddr)
	secrets := app.NewSecrets(app.OSKeyring{})
	if err := secrets.Set("lab", "token", ws.Secret); err != nil {
		t.Fatal(err)
	}
	if err := secrets.Set("runs", "key", api.Secret); err != nil {
		t.Fatal(err)
	}
	cfgDir := e.dir("config")
	st := app.DefaultSettings()
	st.CloseToTray = false
	st.Gateways = []app.GatewaySettings{
		{Name: "lab", URL: ws.Base, Kind: "ws", Auth: "token"},
		{Name: "runs", URL: api.Base, Kind: "api", Auth: "key"},
	}
	store, err := app.NewSettingsStore(cfgDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(st); err != nil {
		t.Fatal(err)
	}
	herald := e.start("herald", bin, startOpts{env: e.childEnv("HERALD_CONFIG_DIR="+cfgDir, "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1"), dir: base})
	sock := filepath.Join(base, "run", "herald", "control.sock")
	h := &harness{t: t, e: e, notes: notes, herald: herald, sock: sock}
	cli := func(args ...string) (string, error) {
		return e.run(60*time.Second, bin, append([]string{args[0], "--control", sock}, args[1:]...)...)
	}

	var tray *trayClient
	var win string
	connected := func(v *service.View, gw string) bool {
		for _, g := range v.Gateways {
			if g.Gateway == gw && g.State == source.StateConnected {
				return true
			}
		}
		return false
	}
	if !t.Run("startup", func(t *testing.T) {
		h.t = t
		reg, err := watch.waitItem(60 * time.Second)
		if err != nil {
			h.fatalf("%v", err)
		}
		if tray, err = newTrayClient(e.bus, reg); err != nil {
			h.fatalf("%v", err)
		}
		h.waitView(60*time.Second, "both gateways connected", func(v *service.View) bool { return connected(v, "lab") && connected(v, "runs") })
		win = h.window()
		sum.add("startup", fmt.Sprintf("both real servers connected, window %s up %s after exec", win, since(total)))
	}) {
		t.Fatalf("Herald did not start up; its log:\n%s", herald.tail(4000))
	}
	h.t = t

	// Three idle sessions another client (a Hermes TUI) started, each
	// named by its first prompt: three one-line rows, one explanation.
	t.Run("three sessions of another client", func(t *testing.T) {
		h.t = t
		other := dialWS(t, ws.URL)
		prompts := []string{"check the disk space", "summarise the logs", "list the open ports"}
		for _, p := range prompts {
			id := other.call("session.create", map[string]any{})["session_id"].(string)
			other.call("prompt.submit", map[string]any{"session_id": id, "text": p})
		}
		h.waitView(step, "the three sessions listed idle, named by their first prompts", func(v *service.View) bool {
			names := v.Names()
			n := 0
			for _, g := range v.Live {
				for _, l := range g.Sessions {
					if g.Gateway == "lab" && l.Status == source.LiveIdle && !l.Followed && contains(prompts, names.Of("lab", l.ID, l.Key, "")) {
						n++
					}
				}
			}
			return n == 3
		})
		ws := h.waitWords(win, "20-three-sessions.png", func(text string) bool {
			return strings.Contains(text, "3 sessions here do not reach herald") && strings.Contains(text, prompts[2])
		})
		text := strings.Join(ws.text, " ")
		if n := strings.Count(text, "do not reach herald"); n != 1 {
			t.Errorf("the explanation is read %d times, want once (see 20-three-sessions.png)", n)
		}
		if n := strings.Count(text, "why?"); n != 1 {
			t.Errorf("\"Why?\" is read %d times, want once (see 20-three-sessions.png)", n)
		}
		// One line each: the rows follow one another a line apart (an
		// explanation per session would stand between them).
		var ys []int
		for _, p := range prompts {
			rows := ws.phrase(p)
			if len(rows) != 1 {
				t.Errorf("%q is read %d times, want one row (see 20-three-sessions.png)", p, len(rows))
				continue
			}
			ys = append(ys, rows[0].Y)
		}
		for i := 1; i < len(ys); i++ {
			if d := ys[i] - ys[i-1]; d <= 0 || d > 40 {
				t.Errorf("rows %d and %d are %d px apart, want one line each (see 20-three-sessions.png)", i-1, i, d)
			}
		}
		reachable(h, ws, "20-three-sessions.png", 1100, 760)
		docs.shot(t, "20-three-sessions.png", "docs/screenshots/window.png")
		sum.add("A sessions", "three idle sessions of another client: three one-line rows, one explanation with Why? (20-three-sessions.png)")
	})

	// The quick prompt keeps the target the user chose while its
	// gateway is down, says why Send is off, and still has it once back.
	t.Run("quick prompt target", func(t *testing.T) {
		h.t = t
		ws0 := h.waitWords(win, "21-target.png", func(text string) bool {
			return strings.Contains(text, "lab: new session") && strings.Contains(text, "quick prompt")
		})
		// The prompt field is under the heading and the To line.
		at := ws0.phrase("quick prompt")
		x, y := at[0].X+40, at[0].Y+80
		click(h, win, x, y) // the user touches the prompt: its target is theirs
		if err := ws.Stop(); err != nil {
			t.Logf("stopping the gateway: %v", err)
		}
		h.waitView(step, "lab down", func(v *service.View) bool { return !connected(v, "lab") })
		h.waitWords(win, "22-target-down.png", func(text string) bool {
			return strings.Contains(text, "lab: new session (not reachable)") && strings.Contains(text, "lab is not connected")
		})
		ws.Restart(t)
		h.waitView(60*time.Second, "lab back", func(v *service.View) bool { return connected(v, "lab") })
		back := h.waitWords(win, "23-target-back.png", func(text string) bool {
			return strings.Contains(text, "lab: new session") && !strings.Contains(text, "not reachable")
		})
		if strings.Contains(strings.Join(back.text, " "), "runs: new run") {
			t.Errorf("the quick prompt shows runs: new run after lab came back (see 23-target-back.png)")
		}
		sum.add("B target", "lab: new session kept while lab was down (Send off, with the reason) and after it came back")
	})

	// A wrong run id: an error beside the field within 1 s, what was
	// typed kept.
	t.Run("wrong run id", func(t *testing.T) {
		h.t = t
		fx, fy := followField(h, win, "24-follow.png")
		click(h, win, fx, fy)
		const wrong = "run_0000deadbeef"
		if _, err := e.run(10*time.Second, "xdotool", "type", "--delay", "20", wrong); err != nil {
			t.Fatal(err)
		}
		before, err := e.screenshot(win, filepath.Join(art, "25-before.png"))
		if err != nil {
			t.Fatal(err)
		}
		band := image.Rect(0, fy+10, 360, fy+70)
		t0 := time.Now()
		if _, err := e.run(10*time.Second, "xdotool", "key", "Return"); err != nil {
			t.Fatal(err)
		}
		// The screen is grabbed as a screenshot starts (import encodes it
		// after): the error was there by the start of the first
		// screenshot showing it, and certainly by its end.
		var took, tookEnd time.Duration
		if err := poll(10*time.Second, 20*time.Millisecond, func() (bool, error) {
			start := time.Since(t0)
			img, err := e.screenshot(win, filepath.Join(art, "25-error.png"))
			if err != nil {
				return false, nil
			}
			if redIn(img, band) > redIn(before, band)+40 {
				took, tookEnd = start, time.Since(t0)
				return true, nil
			}
			return false, nil
		}); err != nil {
			h.fatalf("no error beside Follow run ID after a wrong id (see 25-error.png)")
		}
		if took > time.Second {
			t.Errorf("the error showed %s after Enter (in the screenshot taken then, done %s after), want within 1 s", took, tookEnd)
		}
		read := h.waitWords(win, "26-error.png", func(text string) bool { return strings.Contains(text, "does not know") })
		if !strings.Contains(strings.Join(read.text, " "), "deadbee") { // tesseract reads the last f as t or ?
			t.Errorf("the typed id is not kept in the field (see 26-error.png)")
		}
		clearField(h, win, fx, fy)
		sum.add("C wrong id", fmt.Sprintf("the API server's refusal shown beside the field %s after Enter (screenshot done %s after), the id kept", took.Round(time.Millisecond), tookEnd.Round(time.Millisecond)))
	})

	// One session and one run, each named the same on every surface.
	var runID string
	t.Run("one name everywhere", func(t *testing.T) {
		h.t = t
		for _, tc := range []struct{ gw, prompt, word, answer string }{
			{"lab", "approve-me: git reset --hard HEAD", "session", "once"},
			{"runs", "approve-me: rm -rf ./dist", "run", "deny"},
		} {
			name := approval.FirstWords(tc.prompt)
			if out, err := cli("ask", "--gateway", tc.gw, tc.prompt); err != nil {
				h.fatalf("herald ask --gateway %s: %v\n%s", tc.gw, err, out)
			}
			v := h.waitView(step, tc.word+"'s approval pending", func(v *service.View) bool { return pendingOn(v, tc.gw) != nil })
			r := pendingOn(v, tc.gw)
			if got := v.Names().Of(tc.gw, r.Session, r.StoredSession, r.SessionTitle); got != name {
				t.Errorf("the %s is named %q, want %q (its first prompt)", tc.word, got, name)
			}
			if tc.gw == "runs" {
				runID = r.Session
			}
			// The notification.
			n, err := notes.waitFor(step, "for "+r.Key, func(n note) bool { return n.Key == r.Key && n.Open })
			if err != nil {
				h.fatalf("%v", err)
			}
			if !strings.Contains(n.Summary, name) {
				t.Errorf("the notification %q does not name the %s %q", n.Summary, tc.word, name)
			}
			// The tray: its active runs.
			if _, err := tray.findEntry(step, "the "+tc.word+" among the active runs", func(p, c menuNode) bool {
				return strings.Contains(c.Label, tc.gw+" · "+name)
			}); err != nil {
				m, _ := tray.layout()
				t.Errorf("the tray does not name the %s %q: %v\n%s", tc.word, name, err, m)
			}
			// The tray: the approval's own item, named alike (the name cut
			// to the tray's width).
			who := tc.gw + " · " + name
			if rs := []rune(name); len(rs) > 32 {
				who = tc.gw + " · " + string(rs[:32]) + "…"
			}
			if _, err := tray.findEntry(step, "the "+tc.word+"'s approval item", func(p, c menuNode) bool {
				return strings.HasPrefix(c.Label, who+": ") && strings.Contains(c.Label, r.Command)
			}); err != nil {
				m, _ := tray.layout()
				t.Errorf("the tray's approval item does not name the %s %q: %v\n%s", tc.word, name, err, m)
			}
			// herald pending.
			out, err := cli("pending")
			if err != nil || !strings.Contains(out, "“"+name+"”") {
				t.Errorf("herald pending does not name the %s %q: %v\n%s", tc.word, name, err, out)
			}
			// The window: the sheet and the left pane.
			head := strings.ToLower(strings.Join(strings.Fields(name)[:2], " "))
			h.waitWords(win, "30-"+tc.gw+"-sheet.png", func(text string) bool { return strings.Count(text, head) >= 2 })
			if out, err := cli("approve", service.ShortKey(r.Key), tc.answer); err != nil {
				h.fatalf("herald approve: %v\n%s", err, out)
			}
			h.waitView(step, "the answer confirmed", func(v *service.View) bool { return pendingOn(v, tc.gw) == nil })
			// The history.
			if err := poll(step, 200*time.Millisecond, func() (bool, error) {
				out, err := cli("log", "-n", "20")
				return err == nil && strings.Contains(out, "session “"+name+"”"), nil
			}); err != nil {
				out, _ := cli("log", "-n", "20")
				t.Errorf("herald log does not name the %s %q:\n%s", tc.word, name, out)
			}
		}
		// The window's History names both.
		if hx, hy, ok := h.waitWords(win, "31-live.png", func(text string) bool { return strings.Contains(text, "history") }).find("history"); ok {
			click(h, win, hx, hy)
			hist := h.waitWords(win, "32-history.png", func(text string) bool {
				return strings.Contains(text, "session state") && strings.Contains(text, "approve-me: git") && strings.Contains(text, "approve-me: rm")
			})
			// Back to Live, by its tab (left of History on the same line).
			x, y, ok := hist.find("live")
			if !ok {
				x, y = hx-72, hy
			}
			back := false
			for attempt := 0; attempt < 3 && !back; attempt++ {
				click(h, win, x, y)
				back = poll(5*time.Second, 200*time.Millisecond, func() (bool, error) {
					img, err := e.screenshot(win, filepath.Join(art, "34-live.png"))
					return err == nil && colorCount(img, colConnected)[colConnected] >= 30, nil
				}) == nil
			}
			if !back {
				h.fatalf("the Live tab did not come back (see 34-live.png)")
			}
		}
		sum.add("D names", "a session and a run named by their first prompts on the sheet, the left pane, the tray, their notifications, herald pending, herald log and the History")
	})

	// Every id form Herald shows is taken by Follow run ID and herald stop.
	t.Run("id forms", func(t *testing.T) {
		h.t = t
		if runID == "" {
			t.Skip("no run id (see above)")
		}
		short := strings.TrimPrefix(runID, "run_")[:8]
		forms := []string{runID, "runs/" + runID, "run " + short, short}
		// Follow run ID: each form of a run the server knows.
		fx, fy := followField(h, win, "40-follow.png")
		for i, f := range forms {
			click(h, win, fx, fy)
			e.run(10*time.Second, "xdotool", "type", "--delay", "20", f)
			e.run(10*time.Second, "xdotool", "key", "Return")
			// Taken, it says the run by its name ("Following “approve-me:
			// rm -rf ./dist”."), never by the id typed.
			read := h.waitWords(win, fmt.Sprintf("41-follow-%d.png", i), func(text string) bool {
				return strings.Contains(wordAfter(text, "following"), "approve") || strings.Contains(text, "does not know") || strings.Contains(text, "not a run id")
			})
			if txt := strings.Join(read.text, " "); strings.Contains(txt, "does not know") || strings.Contains(txt, "not a run id") {
				t.Errorf("Follow run ID refused %q (see 41-follow-%d.png)", f, i)
				clearField(h, win, fx, fy)
			}
		}
		// herald stop: each form of a running run, and a session's.
		for _, f := range []string{"whole", "gateway/id", "run prefix", "prefix"} {
			if out, err := cli("ask", "--gateway", "runs", "slow 120"); err != nil {
				h.fatalf("herald ask: %v\n%s", err, out)
			}
			v := h.waitView(step, "a slow run running", func(v *service.View) bool { return runningOn(v, "runs") != nil })
			id := runningOn(v, "runs").ID
			short := strings.TrimPrefix(id, "run_")[:8]
			typed := map[string]string{"whole": id, "gateway/id": "runs/" + id, "run prefix": "run " + short, "prefix": short}[f]
			out, err := e.run(60*time.Second, bin, "stop", "--control", sock, typed)
			if err != nil || !strings.Contains(out, "stopped") {
				t.Errorf("herald stop %q (%s form): %v\n%s", typed, f, err, out)
			}
			h.waitView(step, "the run ended", func(v *service.View) bool { return runningOn(v, "runs") == nil })
		}
		if out, err := cli("ask", "--gateway", "lab", "slow 120"); err != nil {
			h.fatalf("herald ask: %v\n%s", err, out)
		}
		v := h.waitView(step, "a slow session running", func(v *service.View) bool { s := runningOn(v, "lab"); return s != nil && s.StoredID != "" })
		s := runningOn(v, "lab")
		list, _ := cli("stop")
		if !strings.Contains(list, "lab/"+s.StoredID) {
			t.Errorf("herald stop lists the session without its stored id %s:\n%s", s.StoredID, list)
		}
		if out, err := e.run(60*time.Second, bin, "stop", "--control", sock, "lab/"+s.StoredID); err != nil || !strings.Contains(out, "interrupted") {
			t.Errorf("herald stop lab/%s: %v\n%s", s.StoredID, err, out)
		}
		sum.add("E id forms", fmt.Sprintf("Follow run ID took %q, each time saying the run it followed by its name; herald stop took the run id whole, NAME/ID, \"run PREFIX\", a prefix, and a session's stored id", forms))
	})

	// At 800×600 the sessions, the quick prompt and Follow run ID are
	// all on screen.
	t.Run("small window", func(t *testing.T) {
		h.t = t
		if _, err := e.run(10*time.Second, "xdotool", "windowsize", win, "800", "600"); err != nil {
			t.Fatal(err)
		}
		if err := poll(step, 200*time.Millisecond, func() (bool, error) {
			img, err := e.screenshot(win, filepath.Join(art, "50-small.png"))
			return err == nil && img.Bounds().Dx() == 800 && img.Bounds().Dy() == 600, nil
		}); err != nil {
			h.fatalf("the window did not take 800×600")
		}
		ws := h.waitWords(win, "50-small.png", func(text string) bool {
			return strings.Contains(text, "sessions") && strings.Contains(text, "quick prompt") && strings.Contains(text, "follow run id")
		})
		// The History and back, a restart of lab and new sessions since:
		// the quick prompt still goes where the user left it.
		if !strings.Contains(strings.Join(ws.text, " "), "lab: new session") {
			t.Errorf("the quick prompt's target moved from lab: new session (see 50-small.png)")
		}
		reachable(h, ws, "50-small.png", 800, 600)
		docs.shot(t, "50-small.png", "docs/screenshots/small.png")
		sum.add("F 800x600", "Sessions, the quick prompt and Follow run ID on screen (50-small.png)")
	})
	docs.missing(t)
	sum.add("total", since(total))
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// reachable fails unless the Sessions heading, the quick prompt and
// Follow run ID are read inside a window of w×h.
func reachable(h *harness, ws words, file string, w, ht int) {
	h.t.Helper()
	for _, p := range []string{"sessions", "quick prompt", "follow run id"} {
		at := ws.phrase(p)
		if len(at) == 0 {
			h.t.Errorf("%q is not on screen at %d×%d (see %s)", p, w, ht, file)
			continue
		}
		if pt := at[0]; pt.X < 0 || pt.Y < 0 || pt.X >= w || pt.Y >= ht {
			h.t.Errorf("%q is read at %v, outside %d×%d (see %s)", p, pt, w, ht, file)
		}
	}
}

func click(h *harness, win string, x, y int) {
	h.t.Helper()
	if _, err := h.e.run(10*time.Second, "xdotool", "mousemove", "--window", win, strconv.Itoa(x), strconv.Itoa(y), "click", "1"); err != nil {
		h.t.Fatal(err)
	}
}

// wordAfter is the word OCR read after the first word w of text ("" if
// none).
func wordAfter(text, w string) string {
	fs := strings.Fields(text)
	for i, f := range fs {
		if f == w && i+1 < len(fs) {
			return fs[i+1]
		}
	}
	return ""
}

// followField is where the Follow run ID field is: left of its button.
func followField(h *harness, win, file string) (int, int) {
	h.t.Helper()
	ws := h.waitWords(win, file, func(text string) bool { return strings.Contains(text, "follow run id") })
	at := ws.phrase("follow run id")
	return max(at[0].X-130, 20), at[0].Y
}

// clearField empties the field at x, y.
func clearField(h *harness, win string, x, y int) {
	click(h, win, x, y)
	h.e.run(10*time.Second, "xdotool", "key", "ctrl+a", "BackSpace")
}

// redIn counts the reddish pixels in r.
func redIn(img image.Image, r image.Rectangle) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr>>8 > 120 && cg>>8 < 90 && cb>>8 < 90 {
				n++
			}
		}
	}
	return n
}

// pendingOn is the approval waiting on gateway gw, if any.
func pendingOn(v *service.View, gw string) *approval.Request {
	for i := range v.Approvals {
		if v.Approvals[i].Gateway == gw && v.Approvals[i].State == approval.StatePending {
			return &v.Approvals[i]
		}
	}
	return nil
}

// runningOn is a session or run running on gateway gw, if any.
func runningOn(v *service.View, gw string) *service.SessionView {
	for i := range v.Sessions {
		if v.Sessions[i].Gateway == gw && v.Sessions[i].Running {
			return &v.Sessions[i]
		}
	}
	return nil
}

// wsClient is another client of the real gateway (a Hermes TUI): plain
// JSON-RPC over /api/ws.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
	mu   sync.Mutex
	next int
	res  map[int]chan json.RawMessage
}

func dialWS(t *testing.T, url string) *wsClient {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 20 * time.Second}
	conn, _, err := d.Dial(url, http.Header{})
	if err != nil {
		t.Fatalf("another client could not connect: %v", err)
	}
	c := &wsClient{t: t, conn: conn, res: map[int]chan json.RawMessage{}}
	t.Cleanup(func() { conn.Close() })
	go func() {
		for {
			var f struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := conn.ReadJSON(&f); err != nil {
				return
			}
			if f.ID == nil {
				continue
			}
			c.mu.Lock()
			ch := c.res[*f.ID]
			c.mu.Unlock()
			if ch != nil {
				if f.Error != nil {
					ch <- f.Error
				} else {
					ch <- f.Result
				}
			}
		}
	}()
	return c
}

// call sends one request and returns its result.
func (c *wsClient) call(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan json.RawMessage, 1)
	c.res[id] = ch
	err := c.conn.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.mu.Unlock()
	if err != nil {
		c.t.Fatal(err)
	}
	select {
	case raw := <-ch:
		var out map[string]any
		json.Unmarshal(raw, &out)
		if _, isErr := out["code"]; isErr {
			c.t.Fatalf("%s: %s", method, raw)
		}
		return out
	case <-time.After(step):
		c.t.Fatalf("%s: no answer in %s", method, step)
	}
	return nil
}

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/herald-desktop/herald/brand"
)

// docShots are the README's screenshots, by their path in the repository:
// TestDesktop takes every one (docShooter.shot), and with HERALD_E2E_DOCS=1
// copies it there (TestDesktopNames takes namesShots alike). The README links each, and links no other image under
// docs/ (a picture nobody retakes goes stale).
var docShots = []string{
	"docs/screenshot.png",            // the hero: a pending approval, its session named as on the card
	"docs/screenshots/first-run.png", // no gateway yet: the welcome
	"docs/screenshots/approval.png",  // an approval answered in the window, confirmed by the gateway
	"docs/screenshots/no-tray.png",   // no tray host: the notice
	"docs/screenshots/history.png",   // the History, one row per request, by session name
}

// namesShots are the README's screenshots TestDesktopNames takes (linux only; listed here
// so every platform's vet sees it).
var namesShots = []string{
	"docs/screenshots/window.png", // 1100×760: three sessions of another client, the quick prompt, Follow run ID
	"docs/screenshots/small.png",  // 800×600: the same, reachable
}

// monitorShots are the README's screenshots TestDesktopMonitor takes (the
// real panel and notification server).
var monitorShots = []string{
	"docs/screenshots/tray-and-notifications.png", // xfce4-panel's tray and dunst: an approval, the gateway's one informational notice
}

// drawnImages are the README's images drawn by code, not taken by the
// e2e: the tray icon in each state (go run ./brand/gen; brand's tests
// check they are current).
func drawnImages() []string {
	var out []string
	for _, st := range brand.TrayStates() {
		out = append(out, "docs/"+brand.TrayDocPath(st.Name))
	}
	return out
}

// readmeImages are the links to images under docs/ in the README.
var readmeImages = regexp.MustCompile(`\((docs/[^)\s]+\.(?:png|jpg|gif|svg))\)`)

func TestREADMELinksEveryDocShot(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var linked []string
	for _, m := range readmeImages.FindAllStringSubmatch(string(readme), -1) {
		linked = append(linked, m[1])
	}
	all := append(append(slices.Clone(docShots), namesShots...), monitorShots...)
	for _, doc := range append(slices.Clone(all), drawnImages()...) {
		if !slices.Contains(linked, doc) {
			t.Errorf("README.md does not link %s, which the desktop e2e takes", doc)
		}
		if _, err := os.Stat(filepath.Join("..", doc)); err != nil {
			t.Errorf("%s: %v (HERALD_E2E_DOCS=1 e2e/run.sh takes it)", doc, err)
		}
	}
	for _, l := range linked {
		if !slices.Contains(all, l) && !slices.Contains(drawnImages(), l) {
			t.Errorf("README.md links %s, which no e2e scenario takes (add it to docShots and take it)", l)
		}
	}
}

// docShooter copies the README's screenshots one test takes (list) from
// the artifacts when HERALD_E2E_DOCS=1, and says which were not taken.
type docShooter struct {
	art  string
	list []string
	mu   sync.Mutex
	got  map[string]bool
}

func newDocShooter(art string, list []string) *docShooter {
	return &docShooter{art: art, list: list, got: map[string]bool{}}
}

func docsRefresh() bool { return os.Getenv("HERALD_E2E_DOCS") == "1" }

// shot takes artifacts/name as doc (one of docShots).
func (d *docShooter) shot(t *testing.T, name, doc string) {
	t.Helper()
	if !slices.Contains(d.list, doc) {
		t.Fatalf("%s is not one of the README's screenshots this test takes (docShots, namesShots)", doc)
	}
	d.mu.Lock()
	d.got[doc] = true
	d.mu.Unlock()
	if !docsRefresh() {
		return
	}
	b, err := os.ReadFile(filepath.Join(d.art, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", doc), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s refreshed from %s", doc, name)
}

// missing fails for each of docShots no scenario took.
func (d *docShooter) missing(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, doc := range d.list {
		if !d.got[doc] {
			if docsRefresh() {
				t.Errorf("%s was not refreshed: the scenario that takes it failed or was skipped (see above)", doc)
			} else {
				t.Logf("%s not taken: its scenario failed or was skipped", doc)
			}
		}
	}
}

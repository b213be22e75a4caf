package brand

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// The committed icon files must be what the design draws today: run
// `go run ./brand/gen` after changing the geometry or the colours.
func TestCommittedIconsMatchTheDesign(t *testing.T) {
	t.Parallel()
	build := filepath.Join("..", "build")
	pngs := map[string]int{"appicon.png": 1024}
	for _, n := range HicolorSizes {
		pngs[HicolorPath(n)] = n
	}
	for name, n := range pngs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join(build, name))
			if err != nil {
				t.Fatalf("%v (run go run ./brand/gen)", err)
			}
			got, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if !samePixels(got, Draw(n, App)) {
				t.Fatalf("build/%s differs from brand.Draw(%d, App): run go run ./brand/gen", name, n)
			}
		})
	}
	for _, name := range []string{"icon.svg", HicolorPath(0)} {
		b, err := os.ReadFile(filepath.Join(build, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != SVG(App) {
			t.Errorf("build/%s differs from brand.SVG(App): run go run ./brand/gen", name)
		}
	}
	ico, err := os.ReadFile(filepath.Join(build, "windows", "icon.ico"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ICO(App, ICOSizes...)
	if err != nil {
		t.Fatal(err)
	}
	if len(icoEntries(t, ico)) != len(icoEntries(t, want)) {
		t.Errorf("build/windows/icon.ico has other sizes than %v: run go run ./brand/gen", ICOSizes)
	}
}

func samePixels(a image.Image, b *image.NRGBA) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := b.Rect.Min.Y; y < b.Rect.Max.Y; y++ {
		for x := b.Rect.Min.X; x < b.Rect.Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

// icoEntries parses an .ico directory and decodes every PNG entry,
// checking each entry's stated size against the image.
func icoEntries(t *testing.T, b []byte) []int {
	t.Helper()
	if len(b) < 6 || binary.LittleEndian.Uint16(b[2:]) != 1 {
		t.Fatal("not an icon file")
	}
	n := int(binary.LittleEndian.Uint16(b[4:]))
	var sizes []int
	for i := 0; i < n; i++ {
		e := b[6+16*i : 6+16*(i+1)]
		w := int(e[0])
		if w == 0 {
			w = 256
		}
		size, off := binary.LittleEndian.Uint32(e[8:]), binary.LittleEndian.Uint32(e[12:])
		img, err := png.Decode(bytes.NewReader(b[off : off+size]))
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if img.Bounds().Dx() != w || img.Bounds().Dy() != w {
			t.Fatalf("entry %d says %d px, holds %v", i, w, img.Bounds())
		}
		sizes = append(sizes, w)
	}
	return sizes
}

func TestICO(t *testing.T) {
	t.Parallel()
	b, err := ICO(App, 16, 48, 256)
	if err != nil {
		t.Fatal(err)
	}
	if got := icoEntries(t, b); len(got) != 3 || got[0] != 16 || got[1] != 48 || got[2] != 256 {
		t.Fatalf("sizes %v", got)
	}
	if _, err := ICO(App, 512); err == nil {
		t.Fatal("a 512 px entry was accepted")
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	t.Parallel()
	for _, s := range []Style{App, TrayPending} {
		d := xml.NewDecoder(bytes.NewReader([]byte(SVG(s))))
		elems := 0
		for {
			tok, err := d.Token()
			if err != nil {
				if err.Error() != "EOF" {
					t.Fatal(err)
				}
				break
			}
			if _, ok := tok.(xml.StartElement); ok {
				elems++
			}
		}
		if elems < 8 {
			t.Fatalf("only %d elements", elems)
		}
	}
}

// The design at a glance: the glyph is white on the tile, the tile takes
// the style's colour, corners stay transparent, and the badge is red.
func TestDrawPixels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		style Style
		x, y  float64 // in tile units
		want  [4]uint8
	}{
		{"corner is transparent", App, -0.05, -0.05, [4]uint8{0, 0, 0, 0}},
		{"tile below the glyph", App, 0.5, 0.9, [4]uint8{0, 0, 0, 255}},
		{"tube is white", App, 0.35, axisY, [4]uint8{255, 255, 255, 255}},
		{"banner is white", App, 0.30, 0.6, [4]uint8{255, 255, 255, 255}},
		{"notch is tile", App, 0.375, bannerY1 - 0.02, [4]uint8{0, 0, 0, 255}},
		{"outer wave", App, waveCX + wave2, axisY, [4]uint8{255, 255, 255, 255}},
		{"badge is red", TrayPending, badgeCX, badgeCY, [4]uint8{BadgeColor.R, BadgeColor.G, BadgeColor.B, 255}},
		{"no badge when connected", TrayConnected, badgeCX + 0.1, badgeCY - 0.1, [4]uint8{0, 0, 0, 255}},
	}
	const n = 512
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := Draw(n, tc.style)
			m := tc.style.Margin
			px := int((m + tc.x*(1-2*m)) * n)
			py := int((m + tc.y*(1-2*m)) * n)
			c := img.NRGBAAt(px, py)
			got := [4]uint8{c.R, c.G, c.B, c.A}
			want := tc.want
			if want == [4]uint8{0, 0, 0, 255} { // "the tile colour": neither white nor clear
				if c.A != 255 || (c.R == 255 && c.G == 255 && c.B == 255) {
					t.Fatalf("at (%d,%d) got %v, want the tile", px, py, got)
				}
				return
			}
			if got != want {
				t.Fatalf("at (%d,%d) got %v, want %v", px, py, got, want)
			}
		})
	}
}

func TestSmallIconsDropTheOuterWave(t *testing.T) {
	t.Parallel()
	if inGlyph(waveCX+wave2, axisY, true) || !inGlyph(waveCX+wave2, axisY, false) {
		t.Fatal("the simple glyph must leave out the outer wave, the full one keep it")
	}
}

// shapeClass is what a pixel shows regardless of hue: nothing, a colour
// (the tile, a mark's fill, a hollow outline) or white (the glyph, a
// ring, a symbol).
func shapeClass(c color.NRGBA) int {
	switch {
	case c.A < 128:
		return 0
	case min(c.R, c.G, c.B) >= 200:
		return 2
	}
	return 1
}

// shapeDiff counts the pixels whose shapeClass differs between a and b.
func shapeDiff(a, b *image.NRGBA) int {
	n := 0
	for i := 0; i < len(a.Pix); i += 4 {
		ca := color.NRGBA{a.Pix[i], a.Pix[i+1], a.Pix[i+2], a.Pix[i+3]}
		cb := color.NRGBA{b.Pix[i], b.Pix[i+1], b.Pix[i+2], b.Pix[i+3]}
		if shapeClass(ca) != shapeClass(cb) {
			n++
		}
	}
	return n
}

// minShapeDiff is how many of a 22 px icon's 484 pixels must differ in
// shape between two states, well above the anti-aliasing's few.
const minShapeDiff = 12

// TestTrayStatesDifferInShape: at a panel's 22 px every pair of tray
// states differs in shape (which pixels are clear, coloured or white),
// not only in hue, so the state reads in grey and for colour-blind
// people too. The measure ignores hue: the same shape in other colours
// counts as no difference.
func TestTrayStatesDifferInShape(t *testing.T) {
	t.Parallel()
	states := TrayStates()
	if len(states) != 6 {
		t.Fatalf("%d tray states, want idle, running, waiting, blind, degraded, disconnected", len(states))
	}
	recoloured := TrayConnected
	recoloured.Top, recoloured.Bottom = TrayBlind.Top, TrayPending.Bottom
	// Only anti-aliased edge pixels may fall either way.
	if d := shapeDiff(Draw(TrayDocSize, TrayConnected), Draw(TrayDocSize, recoloured)); d > 2 {
		t.Fatalf("a recoloured tile differs in %d pixels: the measure sees hue", d)
	}
	for i, a := range states {
		for _, b := range states[i+1:] {
			d := shapeDiff(Draw(TrayDocSize, a.Style), Draw(TrayDocSize, b.Style))
			t.Logf("%s vs %s: %d pixels differ in shape", a.Name, b.Name, d)
			if d < minShapeDiff {
				t.Errorf("%s and %s differ in %d pixels of shape at %d px, want %d or more", a.Name, b.Name, d, TrayDocSize, minShapeDiff)
			}
		}
	}
}

// TestCommittedTrayIconsMatchTheDesign: docs/tray/*.png (the README shows
// them) are what the design draws: run `go run ./brand/gen`.
func TestCommittedTrayIconsMatchTheDesign(t *testing.T) {
	t.Parallel()
	for _, st := range TrayStates() {
		b, err := os.ReadFile(filepath.Join("..", "docs", TrayDocPath(st.Name)))
		if err != nil {
			t.Fatalf("%v (run go run ./brand/gen)", err)
		}
		got, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if !samePixels(got, Draw(TrayDocSize, st.Style)) {
			t.Errorf("docs/%s differs from the design: run go run ./brand/gen", TrayDocPath(st.Name))
		}
	}
}

// Package brand draws Herald's icon: a white herald's trumpet with its
// swallowtail banner and two sound waves, on a rounded tile. One geometry serves every use: the application
// icon (build/appicon.png, build/icon.svg, build/windows/icon.ico and the
// hicolor PNGs, written by brand/gen), the window icon, and the tray icon in
// each state. A tray state changes the tile's colour and, so that it reads
// without colour too, its shape: a mark of its own at the lower right (a
// play triangle, a diamond, a square with a cross), a dot at the top right,
// or the tile drawn hollow (TrayStates; docs/tray/*.png). It is plain Go
// (image/*), so the icons are reproducible without any drawing tool.
package brand

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
)

// Style is how one icon is drawn.
type Style struct {
	// Top and Bottom are the tile's vertical gradient.
	Top, Bottom color.RGBA
	// Margin is the empty border around the tile, as a fraction of the size.
	Margin float64
	// Badge adds a red dot at the top right (approvals pending).
	Badge bool
	// Mark is a shape at the lower right (tray states), in MarkColor,
	// ringed in white.
	Mark      Mark
	MarkColor color.RGBA
	// Hollow draws the tile as an outline in Top's colour, the glyph in
	// the same colour, and nothing inside (nothing connected).
	Hollow bool
}

// Mark is a tray state's shape at the tile's lower right.
type Mark int

// Marks.
const (
	MarkNone Mark = iota
	// MarkPlay: a disc with a white play triangle (a run in progress).
	MarkPlay
	// MarkDiamond: a diamond with a white dot (Herald cannot see
	// something).
	MarkDiamond
	// MarkCross: a square with a white cross (a gateway is down).
	MarkCross
)

// Colours of the design.
var (
	Glyph      = color.RGBA{0xff, 0xff, 0xff, 0xff}
	BadgeColor = color.RGBA{0xd3, 0x2f, 0x2f, 0xff}
)

// App is the application icon: an indigo tile.
var App = Style{Top: color.RGBA{0x5b, 0x7c, 0xfa, 0xff}, Bottom: color.RGBA{0x2f, 0x3f, 0xc0, 0xff}, Margin: 0.0625}

// Tray styles: the same design, the tile coloured by connection state.
var (
	TrayDisconnected = Style{Top: color.RGBA{0x9a, 0x9f, 0xa8, 0xff}, Bottom: color.RGBA{0x76, 0x7b, 0x84, 0xff}, Margin: 0.03}
	TrayConnected    = Style{Top: color.RGBA{0x3c, 0xb8, 0x6e, 0xff}, Bottom: color.RGBA{0x2e, 0x9e, 0x5b, 0xff}, Margin: 0.03}
	// TrayDegraded: some gateways connected, others not (green fading to
	// the disconnected grey).
	TrayDegraded = Style{Top: color.RGBA{0x3c, 0xb8, 0x6e, 0xff}, Bottom: color.RGBA{0x76, 0x7b, 0x84, 0xff}, Margin: 0.03}
	TrayPending  = Style{Top: color.RGBA{0xf5, 0xa3, 0x1a, 0xff}, Bottom: color.RGBA{0xe0, 0x8a, 0x00, 0xff}, Margin: 0.03, Badge: true}
)

func init() {
	// Each tray state differs in shape, not only in colour
	// (TestTrayStatesDifferInShape): the disconnected tile is hollow, a
	// gateway down adds a crossed square.
	TrayDisconnected.Hollow = true
	TrayDegraded.Mark, TrayDegraded.MarkColor = MarkCross, color.RGBA{0x5f, 0x63, 0x6b, 0xff}
}

// More tray states, each with its own mark.
var (
	// TrayRunning: a run or turn in progress (blue, a play triangle).
	TrayRunning = Style{Top: color.RGBA{0x4a, 0x8c, 0xf0, 0xff}, Bottom: color.RGBA{0x23, 0x5f, 0xd0, 0xff}, Margin: 0.03,
		Mark: MarkPlay, MarkColor: color.RGBA{0x14, 0x2f, 0x73, 0xff}}
	// TrayBlind: Herald cannot see something (a session elsewhere, an
	// approval it can only deny, an answer whose outcome is unknown).
	TrayBlind = Style{Top: color.RGBA{0x9b, 0x7b, 0xd8, 0xff}, Bottom: color.RGBA{0x6e, 0x4f, 0xb8, 0xff}, Margin: 0.03,
		Mark: MarkDiamond, MarkColor: color.RGBA{0x3b, 0x1f, 0x7a, 0xff}}
)

// TrayState names one tray icon state and its style, in the order the
// docs show them.
type TrayState struct {
	Name  string // file name stem: docs/tray/<Name>.png
	What  string // what it means, for people
	Style Style
}

// TrayDocSize is the size the docs show the tray states at: a panel's.
const TrayDocSize = 22

// TrayDocPath is where state name's PNG lives under docs/.
func TrayDocPath(name string) string { return "tray/" + name + ".png" }

// TrayStates are the tray icon's states.
func TrayStates() []TrayState {
	return []TrayState{
		{"idle", "connected, nothing running", TrayConnected},
		{"running", "a run or turn in progress", TrayRunning},
		{"waiting", "waiting for you: an approval or a question", TrayPending},
		{"blind", "Herald cannot see something: a session elsewhere, a deny-only approval, an outcome unknown", TrayBlind},
		{"degraded", "a gateway is down", TrayDegraded},
		{"disconnected", "every gateway is down (or none is set up)", TrayDisconnected},
	}
}

// The geometry, in units of the tile (0..1 across the tile, y down): a
// herald's trumpet (mouthpiece, tube, flared bell, rim) with a swallowtail
// banner hanging from the tube, and sound waves from the bell.
const (
	tileRadius = 0.22
	axisY      = 0.385 // the trumpet's axis

	mouthX0, mouthX1, mouthHalf = 0.12, 0.19, 0.055
	tubeX0, tubeX1, tubeHalf    = 0.17, 0.50, 0.032
	bellX1, bellHalf            = 0.70, 0.165 // the bell flares from tubeX1 to bellX1
	rimX0, rimX1, rimHalf       = 0.68, 0.735, 0.175
	smallRadius                 = 0.02

	bannerX0, bannerX1 = 0.25, 0.50
	bannerY0, bannerY1 = 0.385, 0.745 // top (on the tube) and the tails' tips
	bannerNotch        = 0.085        // depth of the swallowtail's notch

	waveCX    = 0.70
	wave1     = 0.125 // centre radius of the inner wave
	wave2     = 0.215 // centre radius of the outer wave
	waveHalf  = 0.028 // half stroke
	waveAngle = 40.0  // degrees either side of the axis

	// The badge: a red dot with a white ring, top right.
	badgeCX, badgeCY, badgeR, badgeRing = 0.80, 0.20, 0.17, 0.045

	// A tray state's mark, lower right: its size (a disc's radius, half
	// a diamond's diagonal less the ring, a square's half side) and its
	// white ring.
	markCX, markCY, markR, markRing = 0.74, 0.74, 0.22, 0.055
	markDiamond                     = 0.21 // half diagonal, inside the ring
	markSquare                      = 0.19 // half side, inside the ring
	markStroke                      = 0.05 // half width of the cross's bars
	// hollowRing is the hollow tile's outline width.
	hollowRing = 0.11
)

// playTriangle is MarkPlay's white triangle.
var playTriangle = [][2]float64{{markCX - 0.075, markCY - 0.12}, {markCX + 0.125, markCY}, {markCX - 0.075, markCY + 0.12}}

// inMark reports which part of mark m a tile point is on: the mark's
// fill, its white symbol or ring, or none.
func inMark(m Mark, x, y float64) (part int) {
	dx, dy := x-markCX, y-markCY
	switch m {
	case MarkPlay:
		switch {
		case dx*dx+dy*dy > (markR+markRing)*(markR+markRing):
			return partClear
		case dx*dx+dy*dy > markR*markR, inPolygon(x, y, playTriangle):
			return partRing
		}
		return partMark
	case MarkDiamond:
		d := math.Abs(dx) + math.Abs(dy)
		switch {
		case d > markDiamond+markRing*math.Sqrt2:
			return partClear
		case d > markDiamond, dx*dx+dy*dy <= 0.06*0.06:
			return partRing
		}
		return partMark
	case MarkCross:
		e := math.Max(math.Abs(dx), math.Abs(dy))
		switch {
		case e > markSquare+markRing:
			return partClear
		case e > markSquare:
			return partRing
		case math.Abs(dx) <= 0.12 && math.Abs(dy) <= 0.12 && (math.Abs(dx-dy) <= markStroke*math.Sqrt2 || math.Abs(dx+dy) <= markStroke*math.Sqrt2):
			return partRing
		}
		return partMark
	}
	return partClear
}

// bell is the flared bell's outline: the tube's width widening
// quadratically to the rim.
var bell = func() [][2]float64 {
	const n = 10
	var top, bottom [][2]float64
	for i := 0; i <= n; i++ {
		t := float64(i) / n
		x := tubeX1 + (bellX1-tubeX1)*t
		h := tubeHalf + (bellHalf-tubeHalf)*t*t
		top = append(top, [2]float64{x, axisY - h})
		bottom = append([][2]float64{{x, axisY + h}}, bottom...)
	}
	return append(top, bottom...)
}()

// banner is the swallowtail banner's outline.
var banner = [][2]float64{
	{bannerX0, bannerY0}, {bannerX1, bannerY0}, {bannerX1, bannerY1},
	{(bannerX0 + bannerX1) / 2, bannerY1 - bannerNotch}, {bannerX0, bannerY1},
}

// simpleBelow is the pixel size under which the outer wave is left out
// (it would blur into the inner one).
const simpleBelow = 40

func roundRect(x, y, x0, y0, x1, y1, r float64) bool {
	if x < x0 || x > x1 || y < y0 || y > y1 {
		return false
	}
	cx := math.Min(math.Max(x, x0+r), x1-r)
	cy := math.Min(math.Max(y, y0+r), y1-r)
	dx, dy := x-cx, y-cy
	return dx*dx+dy*dy <= r*r
}

// inPolygon is the even-odd rule.
func inPolygon(x, y float64, pts [][2]float64) bool {
	in := false
	for i, j := 0, len(pts)-1; i < len(pts); j, i = i, i+1 {
		xi, yi, xj, yj := pts[i][0], pts[i][1], pts[j][0], pts[j][1]
		if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

func inTrumpet(x, y float64) bool {
	return roundRect(x, y, mouthX0, axisY-mouthHalf, mouthX1, axisY+mouthHalf, smallRadius) ||
		(x >= tubeX0 && x <= tubeX1+0.01 && math.Abs(y-axisY) <= tubeHalf) ||
		inPolygon(x, y, bell) ||
		roundRect(x, y, rimX0, axisY-rimHalf, rimX1, axisY+rimHalf, smallRadius) ||
		inPolygon(x, y, banner)
}

func inWave(x, y, r float64) bool {
	dx, dy := x-waveCX, y-axisY
	a := waveAngle * math.Pi / 180
	if dx > 0 && math.Abs(math.Atan2(dy, dx)) <= a {
		d := math.Hypot(dx, dy)
		return math.Abs(d-r) <= waveHalf
	}
	// Round caps at both ends.
	for _, s := range []float64{-1, 1} {
		ex, ey := waveCX+r*math.Cos(a), axisY+s*r*math.Sin(a)
		if (x-ex)*(x-ex)+(y-ey)*(y-ey) <= waveHalf*waveHalf {
			return true
		}
	}
	return false
}

// inGlyph reports whether tile point (x, y) is white.
func inGlyph(x, y float64, simple bool) bool {
	if inTrumpet(x, y) || inWave(x, y, wave1) {
		return true
	}
	return !simple && inWave(x, y, wave2)
}

// Part of the icon a point falls on.
const (
	partClear = iota
	partTile
	partGlyph
	partBadge
	partRing
	partMark
)

func (s Style) part(x, y float64, simple bool) int {
	switch {
	case s.Badge && inCircle(x, y, badgeCX, badgeCY, badgeR):
		return partBadge
	case s.Badge && inCircle(x, y, badgeCX, badgeCY, badgeR+badgeRing):
		return partRing
	}
	if p := inMark(s.Mark, x, y); p != partClear {
		return p
	}
	switch {
	case !roundRect(x, y, 0, 0, 1, 1, tileRadius):
		return partClear
	case inGlyph(x, y, simple):
		return partGlyph
	case s.Hollow && roundRect(x, y, hollowRing, hollowRing, 1-hollowRing, 1-hollowRing, tileRadius-hollowRing):
		return partClear
	}
	return partTile
}

func (s Style) color(part int, y float64) color.RGBA {
	switch part {
	case partBadge:
		return BadgeColor
	case partMark:
		return s.MarkColor
	case partGlyph:
		if s.Hollow {
			return s.Top
		}
		return Glyph
	case partRing:
		return Glyph
	case partTile:
		return mix(s.Top, s.Bottom, y)
	}
	return color.RGBA{}
}

// Draw renders the icon at size x size pixels, anti-aliased: pixels near
// an edge (where the part under a pixel's centre differs from a
// neighbour's) average 4x4 samples.
func Draw(size int, s Style) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	simple := size < simpleBelow
	m := s.Margin
	span := 1 - 2*m
	tile := func(u, v float64) (float64, float64) {
		return (u/float64(size) - m) / span, (v/float64(size) - m) / span
	}
	// The part under each pixel's centre, with a border of one.
	w := size + 2
	parts := make([]int, w*w)
	for py := -1; py <= size; py++ {
		for px := -1; px <= size; px++ {
			x, y := tile(float64(px)+0.5, float64(py)+0.5)
			parts[(py+1)*w+px+1] = s.part(x, y, simple)
		}
	}
	const ss = 4
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			c := parts[(py+1)*w+px+1]
			edge := false
			for dy := -1; dy <= 1 && !edge; dy++ {
				for dx := -1; dx <= 1; dx++ {
					if parts[(py+1+dy)*w+px+1+dx] != c {
						edge = true
						break
					}
				}
			}
			if !edge {
				if c != partClear {
					_, y := tile(float64(px)+0.5, float64(py)+0.5)
					k := s.color(c, y)
					img.SetNRGBA(px, py, color.NRGBA{k.R, k.G, k.B, 0xff})
				}
				continue
			}
			var r, g, b, cover float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x, y := tile(float64(px)+(float64(sx)+0.5)/ss, float64(py)+(float64(sy)+0.5)/ss)
					p := s.part(x, y, simple)
					if p == partClear {
						continue
					}
					k := s.color(p, y)
					r += float64(k.R)
					g += float64(k.G)
					b += float64(k.B)
					cover++
				}
			}
			if cover == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{
				R: uint8(r/cover + 0.5), G: uint8(g/cover + 0.5), B: uint8(b/cover + 0.5),
				A: uint8(255*cover/(ss*ss) + 0.5),
			})
		}
	}
	return img
}

func inCircle(x, y, cx, cy, r float64) bool { return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r }

func mix(a, b color.RGBA, t float64) color.RGBA {
	t = math.Min(math.Max(t, 0), 1)
	l := func(p, q uint8) uint8 { return uint8(float64(p) + (float64(q)-float64(p))*t + 0.5) }
	return color.RGBA{l(a.R, b.R), l(a.G, b.G), l(a.B, b.B), 0xff}
}

// PNG renders the icon as PNG bytes.
func PNG(size int, s Style) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, Draw(size, s)); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return b.Bytes()
}

// ICO packs PNG renderings of each size (at most 256) into a Windows .ico
// file (PNG entries, Windows Vista and later).
func ICO(s Style, sizes ...int) ([]byte, error) {
	var head, body bytes.Buffer
	le16 := func(w *bytes.Buffer, v int) { w.WriteByte(byte(v)); w.WriteByte(byte(v >> 8)) }
	le32 := func(w *bytes.Buffer, v int) { le16(w, v); le16(w, v>>16) }
	le16(&head, 0)
	le16(&head, 1) // icon
	le16(&head, len(sizes))
	offset := 6 + 16*len(sizes)
	for _, n := range sizes {
		if n < 1 || n > 256 {
			return nil, fmt.Errorf("brand: ico sizes are 1..256, not %d", n)
		}
		p := PNG(n, s)
		head.WriteByte(byte(n % 256)) // 0 means 256
		head.WriteByte(byte(n % 256))
		head.WriteByte(0) // no palette
		head.WriteByte(0)
		le16(&head, 1)  // planes
		le16(&head, 32) // bits per pixel
		le32(&head, len(p))
		le32(&head, offset)
		offset += len(p)
		body.Write(p)
	}
	return append(head.Bytes(), body.Bytes()...), nil
}

// SVG is the scalable icon, drawn from the same geometry as Draw.
func SVG(s Style) string {
	const n = 1024.0
	m := s.Margin * n
	k := n - 2*m
	p := func(v float64) string { return trim(m + v*k) }
	poly := func(pts [][2]float64) string {
		var out []string
		for _, q := range pts {
			out = append(out, p(q[0])+","+p(q[1]))
		}
		return strings.Join(out, " ")
	}
	l := func(v float64) string { return trim(v * k) }
	hex := func(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }
	tileSVG := fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="%s" rx="%s" fill="url(#tile)"/>`, p(0), p(0), l(1), l(1), l(tileRadius))
	glyph := "#ffffff"
	if s.Hollow {
		h := hollowRing / 2
		tileSVG = fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="%s" rx="%s" fill="none" stroke="%s" stroke-width="%s"/>`,
			p(h), p(h), l(1-hollowRing), l(1-hollowRing), l(tileRadius-h), hex(s.Top), l(hollowRing))
		glyph = hex(s.Top)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="1024" height="1024" viewBox="0 0 1024 1024">
  <title>Herald</title>
  <defs>
    <linearGradient id="tile" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="%s"/>
      <stop offset="1" stop-color="%s"/>
    </linearGradient>
  </defs>
  %s
  <g fill="%s">
    <rect x="%s" y="%s" width="%s" height="%s" rx="%s"/>
    <rect x="%s" y="%s" width="%s" height="%s"/>
    <polygon points="%s"/>
    <rect x="%s" y="%s" width="%s" height="%s" rx="%s"/>
    <polygon points="%s"/>
  </g>
  <g fill="none" stroke="%s" stroke-width="%s" stroke-linecap="round">
`, hex(s.Top), hex(s.Bottom), tileSVG, glyph,
		p(mouthX0), p(axisY-mouthHalf), l(mouthX1-mouthX0), l(2*mouthHalf), l(smallRadius),
		p(tubeX0), p(axisY-tubeHalf), l(tubeX1+0.01-tubeX0), l(2*tubeHalf),
		poly(bell),
		p(rimX0), p(axisY-rimHalf), l(rimX1-rimX0), l(2*rimHalf), l(smallRadius),
		poly(banner),
		glyph, l(2*waveHalf))
	a := waveAngle * math.Pi / 180
	for _, r := range []float64{wave1, wave2} {
		fmt.Fprintf(&b, "    <path d=\"M %s %s A %s %s 0 0 1 %s %s\"/>\n",
			p(waveCX+r*math.Cos(a)), p(axisY-r*math.Sin(a)), l(r), l(r), p(waveCX+r*math.Cos(a)), p(axisY+r*math.Sin(a)))
	}
	b.WriteString("  </g>\n")
	if s.Badge {
		fmt.Fprintf(&b, "  <circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"#ffffff\"/>\n  <circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\"/>\n",
			p(badgeCX), p(badgeCY), l(badgeR+badgeRing), p(badgeCX), p(badgeCY), l(badgeR), hex(BadgeColor))
	}
	b.WriteString(markSVG(s.Mark, hex(s.MarkColor), p, l, poly))
	b.WriteString("</svg>\n")
	return b.String()
}

// markSVG draws mark m as inMark does: p places a tile coordinate, l
// scales a length, poly places a polygon.
func markSVG(m Mark, fill string, p, l func(float64) string, poly func([][2]float64) string) string {
	switch m {
	case MarkPlay:
		return fmt.Sprintf("  <circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"#ffffff\"/>\n  <circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"%s\"/>\n  <polygon points=\"%s\" fill=\"#ffffff\"/>\n",
			p(markCX), p(markCY), l(markR+markRing), p(markCX), p(markCY), l(markR), fill, poly(playTriangle))
	case MarkDiamond:
		d := func(r float64) [][2]float64 {
			return [][2]float64{{markCX, markCY - r}, {markCX + r, markCY}, {markCX, markCY + r}, {markCX - r, markCY}}
		}
		return fmt.Sprintf("  <polygon points=\"%s\" fill=\"#ffffff\"/>\n  <polygon points=\"%s\" fill=\"%s\"/>\n  <circle cx=\"%s\" cy=\"%s\" r=\"%s\" fill=\"#ffffff\"/>\n",
			poly(d(markDiamond+markRing*math.Sqrt2)), poly(d(markDiamond)), fill, p(markCX), p(markCY), l(0.06))
	case MarkCross:
		o, i := markSquare+markRing, markSquare
		return fmt.Sprintf("  <rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#ffffff\"/>\n  <rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"/>\n"+
			"  <path d=\"M %s %s L %s %s M %s %s L %s %s\" stroke=\"#ffffff\" stroke-width=\"%s\"/>\n",
			p(markCX-o), p(markCY-o), l(2*o), l(2*o), p(markCX-i), p(markCY-i), l(2*i), l(2*i), fill,
			p(markCX-0.12), p(markCY-0.12), p(markCX+0.12), p(markCY+0.12), p(markCX-0.12), p(markCY+0.12), p(markCX+0.12), p(markCY-0.12), l(2*markStroke))
	}
	return ""
}

func trim(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// ICOSizes are the sizes in build/windows/icon.ico.
var ICOSizes = []int{16, 24, 32, 48, 64, 128, 256}

// HicolorSizes are the PNG sizes installed into the hicolor icon theme.
var HicolorSizes = []int{16, 22, 24, 32, 48, 64, 128, 256, 512}

// HicolorPath is where size n (0: scalable) lives under build/, relative:
// linux/icons/hicolor/NxN/apps/herald.png, the layout of
// /usr/share/icons/hicolor.
func HicolorPath(n int) string {
	if n == 0 {
		return "linux/icons/hicolor/scalable/apps/herald.svg"
	}
	return fmt.Sprintf("linux/icons/hicolor/%dx%d/apps/herald.png", n, n)
}

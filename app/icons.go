package app

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"sync"
)

var (
	iconOnce  sync.Once
	iconCache map[TrayState][]byte
)

// trayIcon draws the tray icon for a state: grey (disconnected), green
// (connected), amber with a dot (approvals pending).
func trayIcon(s TrayState) []byte {
	iconOnce.Do(func() {
		iconCache = map[TrayState][]byte{
			TrayDisconnected: drawIcon(color.RGBA{0x80, 0x80, 0x80, 0xff}, false),
			TrayConnected:    drawIcon(color.RGBA{0x2e, 0x9e, 0x5b, 0xff}, false),
			TrayPending:      drawIcon(color.RGBA{0xe0, 0x8a, 0x00, 0xff}, true),
		}
	})
	return iconCache[s]
}

func drawIcon(c color.RGBA, badge bool) []byte {
	const n = 32
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			dx, dy := x-n/2, y-n/2
			if dx*dx+dy*dy <= 13*13 {
				img.Set(x, y, c)
			}
			if badge {
				bx, by := x-25, y-7
				if bx*bx+by*by <= 6*6 {
					img.Set(x, y, color.RGBA{0xd0, 0x20, 0x20, 0xff})
				}
			}
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

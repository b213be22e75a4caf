package app

import (
	"sync"

	"github.com/herald-desktop/herald/brand"
)

// trayIconSize is the tray icon's edge in pixels (trays scale it).
const trayIconSize = 32

var (
	iconOnce  sync.Once
	iconCache map[TrayState][]byte
)

// trayIcon is Herald's icon (package brand) in the state's colour and
// shape (brand.TrayStates, docs/tray): a hollow tile (nothing connected),
// the plain tile (idle), a play triangle (running), a red dot (waiting
// for you), a diamond (Herald cannot see something), a crossed square
// (a gateway down).
func trayIcon(s TrayState) []byte {
	iconOnce.Do(func() {
		iconCache = map[TrayState][]byte{
			TrayDisconnected: brand.PNG(trayIconSize, brand.TrayDisconnected),
			TrayConnected:    brand.PNG(trayIconSize, brand.TrayConnected),
			TrayDegraded:     brand.PNG(trayIconSize, brand.TrayDegraded),
			TrayPending:      brand.PNG(trayIconSize, brand.TrayPending),
			TrayRunning:      brand.PNG(trayIconSize, brand.TrayRunning),
			TrayBlind:        brand.PNG(trayIconSize, brand.TrayBlind),
		}
	})
	return iconCache[s]
}

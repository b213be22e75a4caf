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

// trayIcon is Herald's icon (package brand) with the tile coloured by
// state: grey (disconnected), green (connected), green fading to grey
// (some gateways down), amber with a red badge (approvals pending).
func trayIcon(s TrayState) []byte {
	iconOnce.Do(func() {
		iconCache = map[TrayState][]byte{
			TrayDisconnected: brand.PNG(trayIconSize, brand.TrayDisconnected),
			TrayConnected:    brand.PNG(trayIconSize, brand.TrayConnected),
			TrayDegraded:     brand.PNG(trayIconSize, brand.TrayDegraded),
			TrayPending:      brand.PNG(trayIconSize, brand.TrayPending),
		}
	})
	return iconCache[s]
}

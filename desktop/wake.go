package desktop

import (
	"context"
	"fmt"

	"github.com/godbus/dbus/v5"
)

// Signals on the system bus that mean "check your links now".
const (
	login1Path   = "/org/freedesktop/login1"
	login1Iface  = "org.freedesktop.login1.Manager"
	nmPath       = "/org/freedesktop/NetworkManager"
	nmIface      = "org.freedesktop.NetworkManager"
	nmConnected  = 70 // NM_STATE_CONNECTED_GLOBAL
	wakeBuffered = 16
)

// WakeReason says why links should be checked.
type WakeReason string

// Wake reasons.
const (
	Resumed        WakeReason = "the computer woke up"
	NetworkChanged WakeReason = "the network changed"
)

// WatchWake calls fn when the machine resumes from sleep (logind's
// PrepareForSleep(false)) or NetworkManager reports full connectivity
// again, until ctx ends. Without a system bus it returns an error and
// Herald relies on its heartbeat's clock-jump check alone.
func WatchWake(ctx context.Context, fn func(WakeReason)) error {
	conn, err := dbus.ConnectSystemBus()
	if err != nil {
		return fmt.Errorf("no system bus (%v): a wake-up or network change is noticed at the next heartbeat instead", err)
	}
	return watchWake(ctx, conn, fn)
}

func watchWake(ctx context.Context, conn *dbus.Conn, fn func(WakeReason)) error {
	matches := [][]dbus.MatchOption{
		{dbus.WithMatchObjectPath(login1Path), dbus.WithMatchInterface(login1Iface), dbus.WithMatchMember("PrepareForSleep")},
		{dbus.WithMatchObjectPath(nmPath), dbus.WithMatchInterface(nmIface), dbus.WithMatchMember("StateChanged")},
	}
	for _, m := range matches {
		if err := conn.AddMatchSignal(m...); err != nil {
			conn.Close()
			return fmt.Errorf("cannot follow sleep and network signals: %v", err)
		}
	}
	ch := make(chan *dbus.Signal, wakeBuffered)
	conn.Signal(ch)
	go forwardSignals(ctx, conn, ch, func(s *dbus.Signal) {
		if r, ok := wakeReason(s); ok {
			fn(r)
		}
	})
	return nil
}

// wakeReason reads one signal: a resume, or the network back up.
func wakeReason(s *dbus.Signal) (WakeReason, bool) {
	if s == nil || len(s.Body) != 1 {
		return "", false
	}
	switch s.Name {
	case login1Iface + ".PrepareForSleep":
		if sleeping, ok := s.Body[0].(bool); ok && !sleeping {
			return Resumed, true
		}
	case nmIface + ".StateChanged":
		if st, ok := s.Body[0].(uint32); ok && st == nmConnected {
			return NetworkChanged, true
		}
	}
	return "", false
}

// forwardSignals hands each signal on ch to handle until ctx ends or the
// connection closes, then stops listening and closes the connection.
func forwardSignals(ctx context.Context, conn *dbus.Conn, ch chan *dbus.Signal, handle func(*dbus.Signal)) {
	defer conn.Close()
	defer conn.RemoveSignal(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case s, ok := <-ch:
			if !ok {
				return
			}
			handle(s)
		}
	}
}

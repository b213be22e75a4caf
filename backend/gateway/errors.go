package gateway

import (
	"errors"
)

// ErrNotConnected is returned by calls made while the channel is down.
var ErrNotConnected = errors.New("not connected to the gateway; Herald is reconnecting, try again in a moment")

// ErrClosed is returned once the client has been stopped.
var ErrClosed = errors.New("gateway client stopped")

// AuthError means the gateway refused Herald's credentials. The client stops
// retrying until credentials change or the user asks to reconnect.
type AuthError struct {
	Status int    // HTTP status of the refused upgrade or login, if any
	Code   int    // WebSocket close code (4401), if any
	Msg    string // what happened, for people
}

func (e *AuthError) Error() string { return e.Msg }

// ConfigError means the gateway refused Herald for a reason retrying cannot
// fix (close 4403, a Host/Origin guard, a wrong URL). The client stops.
type ConfigError struct {
	Status int
	Code   int
	Msg    string
}

func (e *ConfigError) Error() string { return e.Msg }

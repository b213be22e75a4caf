package wire

import "errors"

// ErrOutcomeUnknown is matched (errors.Is) by a send error when the frame
// or request had already gone out to the gateway before the link failed:
// the gateway may have acted on it, so the outcome is unknown, not "not
// sent". Whoever sent it must not invite a blind retry; it reconciles
// from what the gateway says next. Errors that do not match it mean that
// nothing reached the gateway.
var ErrOutcomeUnknown = errors.New("the request was sent, but the link to the gateway dropped before it confirmed it: the outcome is unknown")

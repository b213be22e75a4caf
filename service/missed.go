package service

// MissedText says for people why events may have been missed, from the
// reason code a source gives (Status.MissedReason, wire.ResyncPayload):
// the code itself stays in the details (--json, logs, a tooltip). The
// window's words are the same (frontend/src/lib/format.ts, missedText).
func MissedText(reason string) string {
	switch reason {
	case "":
		return ""
	case "no-replay":
		return "this gateway cannot send what happened while Herald was away"
	case "epoch":
		return "the gateway restarted"
	case "new-runtime":
		return "the session was restarted on the gateway"
	case "truncated":
		return "the gateway no longer holds everything that happened while Herald was away"
	case "resume-failed":
		return "following the session again failed"
	case "replay-failed":
		return "fetching what happened while Herald was away failed"
	case "overflow":
		return "more happened at once than Herald keeps while it catches up"
	case "unreadable-frame":
		return "the gateway sent something Herald could not read"
	}
	// Anything else (a new code, a transport's own sentence naming
	// versions) stays in the details.
	return "the connection was interrupted"
}

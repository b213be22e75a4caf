package wire

// Run ends. A transport whose sessions are runs (the API server) ends each
// run with one of these kinds, under the server's own names; its Data
// implements RunOutcome.
const (
	RunCompleted = "run.completed"
	RunFailed    = "run.failed"
	RunCancelled = "run.cancelled"
	// RunInterrupted is the terminal state newer servers report for a run
	// whose gateway restarted before it settled.
	RunInterrupted = "run.interrupted"
	// RunStatusChanged is synthetic (made by Herald, not a server): a
	// run's polled status changed while no live stream was available. Its
	// Data implements RunState.
	RunStatusChanged = "herald.run.status"
)

// RunState is the Data of RunStatusChanged.
type RunState interface {
	// Terminal reports whether the run has ended.
	Terminal() bool
}

// IsRunEnd reports whether kind ends a run.
func IsRunEnd(kind string) bool {
	switch kind {
	case RunCompleted, RunFailed, RunCancelled, RunInterrupted:
		return true
	}
	return false
}

// IsTurnEnd reports whether kind ends an agent's turn: a session's
// message.complete or a run's end.
func IsTurnEnd(kind string) bool { return kind == MessageComplete || IsRunEnd(kind) }

// RunOutcome is the Data of a run's end, whatever the transport.
type RunOutcome interface {
	// Outcome is the run's final status ("completed", "failed", ...) and
	// its answer, or why it failed.
	Outcome() (status, text string)
}

package approval

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/herald-desktop/herald/backend/wire"
)

// A run's end (wire.IsRunEnd: the API server's terminal run events) is
// what settles an approval Herald did not answer there: its
// tool.completed carries no "BLOCKED: ..." text.

// runEndLocked ends the run's requests still waiting when the run ends:
// the run went on without Herald's answer. A guard message in the output
// ("BLOCKED: Command timed out ...") says how; otherwise a cancelled run
// interrupted them and a finished one settled them elsewhere.
func (in *Inbox) runEndLocked(ev wire.Event, now time.Time) {
	// A request being answered is left to the answer's result: the run
	// may have ended because of that very answer. One whose answer's
	// outcome is unknown stays unknown (or expired, if the output says
	// it timed out): the run's end does not say whose answer settled it.
	live := in.sessionLocked(ev, func(it *item) bool { return it.State.Live() })
	if len(live) == 0 {
		return
	}
	var out struct {
		Output string `json:"output"`
		Error  string `json:"error"`
	}
	_ = json.Unmarshal(ev.Payload, &out)
	status := strings.TrimPrefix(ev.Kind, "run.")
	e := ending{StateCancelled, Outcome{Reason: CancelResolvedElsewhere, Detail: "the run went on and " + status + " without Herald's answer: it was settled elsewhere"}}
	switch {
	case status == "cancelled" || status == "interrupted":
		e.out = Outcome{Reason: CancelInterrupted, Detail: "the run was " + status + " while this request waited"}
	case status == "failed":
		e.out = Outcome{Reason: CancelInterrupted, Detail: "the run failed while this request waited"}
	}
	if i := strings.Index(out.Output, "BLOCKED: "); i >= 0 {
		if b, _ := blockedEnding(out.Output[i:]); b != nil {
			e = *b
		}
	}
	unknown := ending{StateCancelled, Outcome{Detail: "the run " + status}}
	if e.state == StateExpired {
		unknown = e
	}
	for _, it := range live {
		switch it.State {
		case StateAnswering:
			// Left to the answer's result; should the answer's outcome
			// turn out unknown, this end is all that will come.
			it.endedDuring = &unknown
		case StateSentUnknown:
			// Whose answer settled it is exactly what is not known.
			in.endLocked(it, unknown, now)
		default:
			in.endLocked(it, e, now)
		}
	}
}

package source

import (
	"log/slog"
	"math/rand/v2"

	"github.com/herald-desktop/herald/backend/clock"
)

// Defaults fills what a transport's configuration leaves out, the same
// for every transport: the real clock, math/rand jitter and a logger that
// discards.
func Defaults(clk *clock.Clock, rnd *func() float64, logger **slog.Logger) {
	if *clk == nil {
		*clk = clock.Real{}
	}
	if *rnd == nil {
		*rnd = rand.Float64
	}
	if *logger == nil {
		*logger = slog.New(slog.DiscardHandler)
	}
}

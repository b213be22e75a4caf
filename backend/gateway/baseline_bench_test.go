package gateway

import (
	"encoding/json"
	"testing"
)

// BenchmarkBaselineDecodeDispatch is the naive pipeline BenchmarkDecodeDispatch
// is compared against, on the same frames: encoding/json into a
// map[string]any for the whole frame, then an unbuffered channel hop to a
// consumer goroutine (no typing, routing, de-duplication or ordering).
func BenchmarkBaselineDecodeDispatch(b *testing.B) {
	for _, name := range []string{"delta", "tool.complete", "approval"} {
		b.Run(name, func(b *testing.B) {
			frame := benchFrames[name]
			ch := make(chan map[string]any)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for m := range ch {
					if m["jsonrpc"] != "2.0" {
						panic("bad frame")
					}
				}
			}()
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				var m map[string]any
				if err := json.Unmarshal(frame, &m); err != nil {
					b.Fatal(err)
				}
				ch <- m
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
			close(ch)
			<-done
		})
	}
}

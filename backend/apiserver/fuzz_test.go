package apiserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/herald-desktop/herald/backend/apiserver"
)

// sseHandSeeds are edge cases the captures do not contain.
var sseHandSeeds = []string{
	"",
	"\n",
	"\r\n\r\n",
	"\xEF\xBB\xBF",
	"\xEF\xBB\xBFdata: x\r\n\r\n",
	"\xEF\xBB",
	"data",
	"data:\n\n",
	"data: a\rdata: b\r\r",
	"id: 1\nid: 2\x00\ndata: z\n\n",
	"retry: 99999999999999999999999\ndata: r\n\n",
	"event: approval.request\ndata: {\"command\": \"rm -rf /\", \"run_id\": \"run_1\"}\n\n",
	"event: hermes.tool.progress\ndata: {\"status\": \"running\", \"tool\": \"t\"}\n\n",
	"data: {\"object\": \"chat.completion.chunk\", \"choices\": [{\"delta\": {\"content\": \"x\"}, \"finish_reason\": null}]}\n\n",
	"data: [DONE]\n\n",
	"data: {\"event\": 7}\n\n",
	"data: {\"event\": \"run.completed\", \"usage\": \"lots\"}\n\n",
	"data: {\"event\": \"approval.responded\", \"resolved\": \"two\"}\n\n",
	": keepalive\n\n: stream closed\n\n",
	"data: \xff\xfe\n\n",
	"data: {}\r",
}

// FuzzSSE checks that the SSE parser never panics, never returns an event
// over its limit, and gives the same events however the input is split;
// and that every event it yields normalizes to valid JSON.
func FuzzSSE(f *testing.F) {
	for _, name := range sseCaptures(f) {
		f.Add(captureBody(f, name), uint64(len(name)), uint16(0))
	}
	for i, s := range sseHandSeeds {
		f.Add([]byte(s), uint64(i), uint16(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint64, limit uint16) {
		max := int(limit)
		if max == 0 {
			max = apiserver.DefaultMaxEventSize
		}
		whole, _, werr := readAll(bytes.NewReader(in), max)
		sizes := []int{1 + int(split%7), 1 + int((split>>3)%13), 1 + int((split>>7)%251)}
		chunked, _, cerr := readAll(&chunkReader{data: bytes.Clone(in), sizes: sizes}, max)
		if !reflect.DeepEqual(whole, chunked) {
			t.Fatalf("chunking changed the events:\nwhole   %+v\nchunked %+v", whole, chunked)
		}
		if errors.Is(werr, apiserver.ErrEventTooLarge) != errors.Is(cerr, apiserver.ErrEventTooLarge) {
			t.Fatalf("chunking changed the error: %v vs %v", werr, cerr)
		}
		if werr != nil && !errors.Is(werr, apiserver.ErrEventTooLarge) {
			t.Fatalf("unexpected error %v", werr)
		}
		n := &apiserver.Normalizer{Gateway: "fuzz", Now: func() time.Time { return time.Unix(0, 0) }}
		for _, ev := range whole {
			if len(ev.Data) > max || len(ev.Type) > max || len(ev.ID) > max {
				t.Fatalf("event over the %d-byte limit: data %d type %d id %d", max, len(ev.Data), len(ev.Type), len(ev.ID))
			}
			out, ok := n.Event(ev)
			if !ok {
				continue
			}
			if out.Kind == "" {
				t.Fatalf("event without kind from %+v", ev)
			}
			if !json.Valid(out.Payload) {
				t.Fatalf("invalid payload %q from %+v", out.Payload, ev)
			}
		}
	})
}

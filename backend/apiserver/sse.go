package apiserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// DefaultMaxEventSize bounds one server-sent event (all of its field lines
// together) when no other limit is given: 1 MiB.
const DefaultMaxEventSize = 1 << 20

// ErrEventTooLarge is wrapped by the error an SSEReader returns when one
// event, or one line, grows past the reader's limit.
var ErrEventTooLarge = errors.New("server-sent event too large")

// SSEEvent is one dispatched server-sent event.
type SSEEvent struct {
	// Type is the value of the event's "event:" field; empty when the event
	// had none (the Hermes run stream names events inside the JSON instead).
	Type string
	// Data is the event's "data:" lines joined with "\n".
	Data string
	// ID is the stream's last event id when this event was dispatched (the
	// value a reconnect sends as Last-Event-ID). Like EventSource's
	// lastEventId it persists across events that carry no "id:" line.
	ID string
	// HasID reports whether this event itself carried an "id:" field.
	HasID bool
	// Retry is the reconnection delay this event's block asked for with a
	// "retry:" field; zero when it had none.
	Retry time.Duration
}

// SSEReader parses a text/event-stream body incrementally, following the
// WHATWG EventSource rules: LF, CRLF or lone CR line endings (a CRLF split
// across two reads is still one line end), a leading UTF-8 byte-order mark,
// comment lines, multi-line data, id and retry fields. Reads may be split
// anywhere. Memory is bounded: an event or line larger than the limit is
// an error, never an allocation.
//
// An SSEReader is not safe for concurrent use.
type SSEReader struct {
	// OnComment, when set, receives the text of each comment line (after
	// the colon and one optional space), such as "keepalive" or
	// "stream closed".
	OnComment func(text string)

	r   io.Reader
	max int
	buf []byte

	bomDone    bool
	bomMatched int

	line   []byte
	lastCR bool

	evType  []byte
	data    []byte
	hasData bool
	hasID   bool
	retry   time.Duration
	size    int // bytes of field lines in the pending event

	lastID   string
	lastWait time.Duration

	ready []SSEEvent
	err   error
	eof   bool
}

var utf8BOM = [3]byte{0xEF, 0xBB, 0xBF}

// NewSSEReader returns a reader of r that refuses events or lines larger
// than maxEventSize bytes (DefaultMaxEventSize when maxEventSize <= 0).
func NewSSEReader(r io.Reader, maxEventSize int) *SSEReader {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	return &SSEReader{r: r, max: maxEventSize, buf: make([]byte, 4096)}
}

// LastEventID returns the stream's current last event id.
func (s *SSEReader) LastEventID() string { return s.lastID }

// Retry returns the latest reconnection delay the stream asked for with a
// "retry:" field, or zero.
func (s *SSEReader) Retry() time.Duration { return s.lastWait }

// Partial reports, after Next has returned an error, whether the stream
// stopped in the middle of an event (fields received, no closing blank
// line). Such an event is discarded, as EventSource does.
func (s *SSEReader) Partial() bool {
	return len(s.line) > 0 || s.hasData || len(s.evType) > 0 || s.hasID || s.retry > 0
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (or the underlying read error); an event larger than the limit yields
// an error wrapping ErrEventTooLarge. After an error every call returns
// the same error.
func (s *SSEReader) Next() (SSEEvent, error) {
	for {
		if len(s.ready) > 0 {
			ev := s.ready[0]
			s.ready[0] = SSEEvent{}
			s.ready = s.ready[1:]
			return ev, nil
		}
		if s.err != nil {
			return SSEEvent{}, s.err
		}
		if s.eof {
			s.err = io.EOF
			continue
		}
		n, err := s.r.Read(s.buf)
		if n > 0 {
			if perr := s.feed(s.buf[:n]); perr != nil {
				// Events completed before the oversized one are still
				// delivered; the error follows them.
				s.err = perr
				continue
			}
		}
		if err != nil {
			if err == io.EOF {
				s.eof = true
			} else {
				s.err = err
			}
		}
	}
}

// feed processes one chunk of input.
func (s *SSEReader) feed(p []byte) error {
	if !s.bomDone {
		for len(p) > 0 && !s.bomDone {
			if p[0] == utf8BOM[s.bomMatched] {
				s.bomMatched++
				p = p[1:]
				if s.bomMatched == len(utf8BOM) {
					s.bomDone = true
				}
				continue
			}
			// Not a BOM after all: the bytes matched so far are content.
			s.bomDone = true
			if err := s.scan(utf8BOM[:s.bomMatched]); err != nil {
				return err
			}
		}
		if !s.bomDone {
			return nil
		}
	}
	return s.scan(p)
}

// scan splits p into lines and processes each complete one.
func (s *SSEReader) scan(p []byte) error {
	for len(p) > 0 {
		if s.lastCR {
			s.lastCR = false
			if p[0] == '\n' {
				p = p[1:]
				continue
			}
		}
		i := bytes.IndexAny(p, "\r\n")
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if len(s.line)+len(seg) > s.max {
			return s.tooLarge()
		}
		s.line = append(s.line, seg...)
		if i < 0 {
			return nil
		}
		s.lastCR = p[i] == '\r'
		p = p[i+1:]
		if err := s.processLine(); err != nil {
			return err
		}
		s.line = s.line[:0]
	}
	return nil
}

func (s *SSEReader) tooLarge() error {
	return fmt.Errorf("%w: the API server sent an event of more than %d bytes; Herald stopped reading this stream to protect its memory", ErrEventTooLarge, s.max)
}

func (s *SSEReader) processLine() error {
	line := s.line
	if len(line) == 0 {
		s.dispatch()
		return nil
	}
	if line[0] == ':' {
		if s.OnComment != nil {
			c := line[1:]
			if len(c) > 0 && c[0] == ' ' {
				c = c[1:]
			}
			s.OnComment(string(c))
		}
		return nil
	}
	s.size += len(line) + 1
	if s.size > s.max {
		return s.tooLarge()
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "event":
		s.evType = append(s.evType[:0], value...)
	case "data":
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
		s.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.lastID = string(value)
			s.hasID = true
		}
	case "retry":
		if d, ok := parseRetry(value); ok {
			s.retry = d
			s.lastWait = d
		}
	}
	return nil
}

// parseRetry reads a retry field: ASCII digits only, in milliseconds.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || ms > int64(24*time.Hour/time.Millisecond) {
		return 24 * time.Hour, true // absurdly long: clamp rather than overflow
	}
	return time.Duration(ms) * time.Millisecond, true
}

func (s *SSEReader) dispatch() {
	if s.hasData {
		data := s.data[:len(s.data)-1] // drop the final "\n"
		s.ready = append(s.ready, SSEEvent{
			Type:  string(s.evType),
			Data:  string(data),
			ID:    s.lastID,
			HasID: s.hasID,
			Retry: s.retry,
		})
	}
	s.evType = s.evType[:0]
	s.data = s.data[:0]
	s.hasData = false
	s.hasID = false
	s.retry = 0
	s.size = 0
}

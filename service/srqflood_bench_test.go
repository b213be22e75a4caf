package service

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/herald-desktop/herald/approval"
	"github.com/herald-desktop/herald/backend/gateway"
	"github.com/herald-desktop/herald/backend/hermestest"
	"github.com/herald-desktop/herald/backend/source"
	"github.com/herald-desktop/herald/backend/testwait"
)

// srqFlood is the flood of BenchmarkApprovalUnderSRQFlood: 12,000 server
// requests of 20 KB each, what a gateway sending 200 a second for 60 s
// sends (sent here as fast as the loopback socket takes them, which is
// harder on Herald than the same flood spread over a minute).
const (
	srqFlood      = 12000
	srqFloodBytes = 20 << 10
	// srqFloodEvery is how many flood frames go out between two of the
	// user's real approvals (~200 samples per flood).
	srqFloodEvery = 60
)

// floodServer is a hostile gateway: a raw WebSocket server that says
// gateway.ready, answers every call with an empty result, and sends
// approval server requests as fast as the socket takes them.
type floodServer struct {
	*httptest.Server
	conn  chan *floodConn
	frame []byte // a 20 KB approval server request; "ID" is replaced
}

type floodConn struct {
	mu sync.Mutex
	ws *websocket.Conn
}

func (c *floodConn) write(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

func newFloodServer(b *testing.B) *floodServer {
	cmd := "rm -rf ./build-cache && "
	cmd = strings.Repeat(cmd, srqFloodBytes/len(cmd)+1)[:srqFloodBytes]
	frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "ID", "method": "approval", "params": map[string]any{
		"session_id": "flood", "command": cmd, "description": "dangerous command", "choices": []string{"once", "session", "always", "deny"},
	}})
	fs := &floodServer{conn: make(chan *floodConn, 1), frame: frame}
	up := websocket.Upgrader{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/ws" {
			http.NotFound(w, r)
			return
		}
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c := &floodConn{ws: ws}
		c.write([]byte(`{"jsonrpc":"2.0","method":"event","params":{"type":"gateway.ready","payload":{"replay_epoch":"flood-1"}}}`))
		select {
		case fs.conn <- c:
		default:
		}
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var f struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(msg, &f) == nil && f.Method != "" && len(f.ID) > 0 {
				c.write([]byte(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":{}}`))
			}
		}
	}))
	b.Cleanup(fs.Close)
	return fs
}

// srq is the i-th flood frame.
func (fs *floodServer) srq(i int) []byte {
	return []byte(strings.Replace(string(fs.frame), `"ID"`, `"srq-`+strconv.Itoa(i)+`"`, 1))
}

// BenchmarkApprovalUnderSRQFlood: one gateway floods Herald with 12,000
// approval server requests of 20 KB (see srqFlood) over a real loopback
// WebSocket, into the inbox and the on-disk audit log, while the user's
// other gateway (the fake, over its own WebSocket) asks a real approval
// every 60 flood frames. Reports the peak Go heap and peak RSS (MiB) over
// the flood, the p50/p99/max time of a real approval from the gateway's
// write to the notifications' subscriber (WatchApprovals; budget: 100 ms
// p99), and how many flood
// requests were shown (the inbox's limit) and refused. The budgets are
// reported, never asserted.
func BenchmarkApprovalUnderSRQFlood(b *testing.B) {
	store, err := approval.OpenStore(filepath.Join(b.TempDir(), "audit.db"), approval.StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	real := hermestest.NewServer(hermestest.Options{Dialect: hermestest.Modern})
	defer real.Close()
	live, stored := real.CreateSession()
	fs := newFloodServer(b)

	arrived := make(chan time.Time, 16)
	var shown atomic.Int64
	s := New(Config{Store: store})
	defer s.Close()
	dispatch(s, WatchApprovals, func(n Notify) { // the notifications' subscriber
		switch c := n.Approval; {
		case c.Request.Gateway == "real" && c.Kind == approval.ChangeArrived:
			arrived <- time.Now()
		case c.Request.Gateway == "flood" && c.Kind == approval.ChangeArrived:
			shown.Add(1)
		}
	})
	rc, err := addGateway(s, gateway.Config{Name: "real", URL: real.URL, Token: real.Token()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := addGateway(s, gateway.Config{Name: "flood", URL: fs.URL, Token: "t"}); err != nil {
		b.Fatal(err)
	}
	testwait.Until(b, 20*time.Second, "connected", real.Changed, func() bool { return rc.Status().State == source.StateConnected })
	if _, err := rc.AttachSession(b.Context(), stored); err != nil {
		b.Fatal(err)
	}
	var fc *floodConn
	select {
	case fc = <-fs.conn:
	case <-time.After(20 * time.Second):
		b.Fatal("the flood gateway was never dialled")
	}

	var lat []time.Duration
	var peakHeap, peakRSS uint64
	next := 0 // flood frames sent so far, over all iterations
	for b.Loop() {
		runtime.GC()
		resetPeakRSS()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		stop, sampled := make(chan struct{}), make(chan uint64)
		go func() { // the heap's high-water mark, every 2 ms
			var peak uint64
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				metrics.Read(sample)
				peak = max(peak, sample[0].Value.Uint64())
				select {
				case <-stop:
					sampled <- peak
					return
				case <-t.C:
				}
			}
		}()
		flooded := make(chan error, 1)
		progress := make(chan int, srqFlood/srqFloodEvery+1)
		first := next
		go func() {
			for i := range srqFlood {
				if err := fc.write(fs.srq(first + i)); err != nil {
					flooded <- err
					return
				}
				if (i+1)%srqFloodEvery == 0 {
					progress <- i + 1
				}
			}
			close(progress)
			flooded <- nil
		}()
		for range progress { // a real approval every srqFloodEvery frames
			start := time.Now()
			if _, _, err := real.RequestApproval(live, hermestest.ApprovalSpec{Command: "rm -rf ./x"}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, (<-arrived).Sub(start))
		}
		if err := <-flooded; err != nil {
			b.Fatal(err)
		}
		next += srqFlood
		// The flood is over when Herald has shown or refused all of it
		// (re-checked on a ticker: the inbox's flood count has no signal).
		tick := time.NewTicker(20 * time.Millisecond)
		ch := make(chan struct{})
		go func() {
			for {
				select {
				case <-tick.C:
				case <-stop:
					return
				}
				select {
				case ch <- struct{}{}:
				case <-stop:
					return
				}
			}
		}()
		testwait.Until(b, 5*time.Minute, "the flood handled", func() <-chan struct{} { return ch }, func() bool { return floodHandled(s) >= next })
		tick.Stop()
		close(stop)
		peakHeap = max(peakHeap, <-sampled)
		peakRSS = max(peakRSS, readPeakRSS())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(peakRSS)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(shown.Load()), "shown")
	b.ReportMetric(float64(floodRefused(s)), "refused")
}

// floodRefused is how many flood requests the inbox counts as refused
// (a refusal event can stand for many).
func floodRefused(s *Service) int {
	for _, f := range s.Inbox().Snapshot().Floods {
		if f.Gateway == "flood" {
			return f.Refused
		}
	}
	return 0
}

// floodHandled is how many flood requests the inbox holds or refused.
func floodHandled(s *Service) int {
	snap := s.Inbox().Snapshot()
	n := 0
	for _, r := range snap.Requests {
		if r.Gateway == "flood" {
			n++
		}
	}
	for _, f := range snap.Floods {
		if f.Gateway == "flood" {
			n += f.Refused
		}
	}
	return n
}

// resetPeakRSS resets the kernel's peak RSS of this process (Linux; a
// no-op elsewhere), so readPeakRSS reports the flood's own.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// readPeakRSS is VmHWM in bytes (0 where /proc is missing).
func readPeakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

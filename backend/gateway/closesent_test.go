package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestCloseFrameReasonWinsOverWrites: when the gateway closes with 4401
// while Herald writes (a listing, a ping), the write fails with "close
// sent" because the close was already answered; the connection's reason
// must still be the close (sign in again), or herald watch would retry
// instead of exiting.
func TestCloseFrameReasonWinsOverWrites(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4401, "authentication revoked"))
		ws.ReadMessage() // until the client's close answer
	}))
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cn := newConn(ws, time.Now())
	defer cn.fail(errors.New("test over"))
	// Read the close frame the way gorilla does it: the close handler
	// answers it, so every later write fails with ErrCloseSent.
	_, _, rerr := ws.ReadMessage()
	go cn.writeLoop()
	err = cn.enqueue(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"session.active_list"}`), true, nil)
	if !errors.Is(err, websocket.ErrCloseSent) {
		t.Fatalf("write after the close: %v, want close sent", err)
	}
	cn.controlPing()
	cn.fail(closeErr(rerr)) // the reader's report
	var ae *AuthError
	if !errors.As(cn.reason(), &ae) || ae.Code != 4401 {
		t.Fatalf("connection ended with %v, want the gateway's 4401", cn.reason())
	}
}

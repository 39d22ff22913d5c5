package chatstand

import (
	"bufio"
	"crypto/sha1" //nolint:gosec // the WebSocket handshake's own hash (RFC 6455)
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"
)

// The socket page (Options.Socket, ?socket=1): as chat sites built on a
// hub (SignalR and its kind) do, the page opens one WebSocket,
// /api/socket, as it loads and keeps it; a send is still a POST to
// /api/conversation, answered at once with {"conversation","url"}, and
// the answer comes over the socket in SignalR-style records, each
// ended by U+001E:
//
//	{"type":6}                                                               a ping
//	{"type":1,"target":"ReceiveMessage","arguments":[{"conversation":"c…","kind":"reasoning","text":"…"}]}
//	{"type":1,"target":"ReceiveMessage","arguments":[{"conversation":"c…","kind":"delta","text":"…"}]}
//	{"type":1,"target":"ReceiveMessage","arguments":[{"conversation":"c…","kind":"error","text":"…"}]}
//	{"type":1,"target":"ReceiveMessage","arguments":[{"conversation":"c…","kind":"done"}]}
//
// Its network key: {url: /api/socket, format: websocket, path:
// arguments.0.text, when: {arguments.0.kind: delta}}.

// SocketPath is the socket page's WebSocket.
const SocketPath = "/api/socket"

// socketOf reports whether r's page answers over its socket.
func (s *Server) socketOf(r *http.Request) bool {
	if v := r.URL.Query().Get("socket"); v != "" {
		return v == "1"
	}
	return s.opts.Socket
}

// wsConn is one page's socket: frames written whole, one at a time.
type wsConn struct {
	mu sync.Mutex
	c  net.Conn
	bw *bufio.Writer
}

// text writes one text frame (unmasked, as a server's are).
func (c *wsConn) text(p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	hdr := []byte{0x81}
	switch n := len(p); {
	case n < 126:
		hdr = append(hdr, byte(n))
	case n < 1<<16:
		hdr = append(hdr, 126, byte(n>>8), byte(n))
	default:
		hdr = binary.BigEndian.AppendUint64(append(hdr, 127), uint64(n))
	}
	_ = c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.bw.Write(append(hdr, p...)); err != nil {
		return err
	}
	return c.bw.Flush()
}

// handleSocket upgrades a signed-in page's request to a WebSocket and
// keeps it among the user's until the page leaves or the server closes.
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	user, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	key := r.Header.Get("Sec-WebSocket-Key")
	hj, ok := w.(http.Hijacker)
	if key == "" || !ok {
		http.Error(w, "a WebSocket upgrade", http.StatusBadRequest)
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")) //nolint:gosec // RFC 6455
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
	_ = brw.Flush()
	c := &wsConn{c: conn, bw: brw.Writer}
	s.mu.Lock()
	if s.sockets == nil {
		s.sockets = map[string][]*wsConn{}
	}
	s.sockets[user] = append(s.sockets[user], c)
	s.mu.Unlock()
	_ = c.text([]byte(`{"type":6}` + "\x1e"))
	gone := make(chan struct{})
	go func() {
		// The page's frames are not read (it sends over HTTP): a read
		// ends when it leaves.
		buf := make([]byte, 512)
		for {
			if _, err := brw.Read(buf); err != nil {
				close(gone)
				return
			}
		}
	}()
	select {
	case <-gone:
	case <-s.done:
	}
	_ = conn.Close()
	s.mu.Lock()
	list := s.sockets[user]
	for i, x := range list {
		if x == c {
			s.sockets[user] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	<-gone
}

// followSocket answers a send of the socket page: the conversation at
// once over HTTP, then t over every socket of the user, from its start
// to its end.
func (s *Server) followSocket(w http.ResponseWriter, r *http.Request, id string, t *turn) {
	user, _ := s.user(r)
	writeJSON(w, http.StatusOK, map[string]any{"conversation": id, "url": "/c/" + id, "socket": true})
	send := func(kind, text string) {
		arg := map[string]string{"conversation": id, "kind": kind}
		if kind != "done" {
			arg["text"] = text
		}
		b, _ := json.Marshal(map[string]any{"type": 1, "target": "ReceiveMessage", "arguments": []any{arg}})
		s.mu.Lock()
		conns := append([]*wsConn(nil), s.sockets[user]...)
		s.mu.Unlock()
		for _, c := range conns {
			_ = c.text(append(b, 0x1e))
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		sent := 0
		for {
			s.mu.Lock()
			n, state, changed := t.n, t.state, t.changed
			s.mu.Unlock()
			for i := sent; i < n; i++ {
				if i < len(t.think) {
					send("reasoning", t.thinking(i + 1)[len(t.thinking(i)):])
				} else {
					send("delta", t.text(i + 1)[len(t.text(i)):])
				}
				sent = i + 1
			}
			if state != TurnStreaming && state != TurnPending {
				if state == TurnError {
					send("error", ErrTurn)
				}
				send("done", "")
				s.mu.Lock()
				if t.doneSent.IsZero() {
					t.doneSent = time.Now()
				}
				s.mu.Unlock()
				return
			}
			select {
			case <-changed:
			case <-s.done:
				return
			}
		}
	}()
}

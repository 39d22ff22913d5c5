package browser

import (
	"cmp"
	"context"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// netWatch keeps the body of the page's own answer response as it
// arrives, over CDP's Network domain (which chromedp enables on every
// tab). Nothing is sent: the page makes its request, and the watch reads
// the reply the browser received.
//
// On responseReceived it asks Network.streamResourceContent for the
// request, so every later dataReceived event carries its bytes (and the
// reply carries what was buffered before): a streamed body is kept whole
// even when the page reads it with a ReadableStream, which leaves nothing
// for getResponseBody. When streaming gave nothing (the call failed, the
// body came in one piece before it took), the body is asked for once
// with getResponseBody after loadingFinished. A redirect fires
// requestWillBeSent again with the same request id: the body starts over.
//
// The driver's watch (startNetWatch) follows the last request whose URL
// holds the site's network.url; --suggest's (startNetProbe) keeps every
// fetch, XHR and EventSource response the page gets after the probe, to
// find the one that carries the answer.
//
// A WebSocket is watched too (webSocketCreated, webSocketFrameReceived):
// its text frames received from the watch's start are its body, each
// ended by wsSep. A page opens its socket once, as it loads, before any
// watch: the tab's socketLog, started before the page loads, knows its
// URL. A socket stays open across answers, so its body is the frames so
// far: it ends when it closes, or when the page shows the answer ended.
type netWatch struct {
	spec    NetSpec // the driver's: the site's network key
	log     func(msg string, args ...any)
	match   func(*network.Request, network.ResourceType) bool
	keepAll bool // every match is kept (the probe), not only the last
	// bodyOnly never asks to stream a response, so every body comes from
	// getResponseBody: a seam for the tests of that path, which on a real
	// page runs only when the machine is slow (the body was in before
	// streaming took).
	bodyOnly bool
	sockets  *socketLog // the tab's WebSocket URLs, for a socket opened before the watch (nil: none)

	mu      sync.Mutex
	id      network.RequestID // the last match
	resps   map[network.RequestID]*netResp
	order   []network.RequestID
	changed chan struct{} // a signal per change, for a waiter (cap 1)
	work    chan netJob
	done    chan struct{}
	cancel  context.CancelFunc
}

// netResp is one response as it came in.
type netResp struct {
	url      string
	mime     string   // the MIME type Chromium gives the response
	declared string   // the charset its Content-Type declares ("": none)
	charset  string   // the charset Chromium decoded its text by ("": its default)
	buffered []byte   // streamResourceContent's bufferedData
	chunks   [][]byte // dataReceived's data, in order
	esMsgs   []string // EventSource messages, when no bytes streamed
	streamed bool     // streamResourceContent took
	ws       bool     // a WebSocket: chunks are its frames, each ended by wsSep
	finished time.Time
	failed   string // loadingFailed's error
	canceled bool   // the page canceled it (after reading its end?)
	body     []byte // the whole body, once finished
	bodyErr  error
}

// netJob is a CDP call the events ask for: stream the response, or
// (settle) fix its body once it ended.
type netJob struct {
	id     network.RequestID
	settle bool
}

// startNetWatch starts watching the tab of ctx for responses to spec.URL
// (only requests sent from now on: the earlier answers' are not seen).
// Stop ends it.
// bodyOnly is the tests' seam (see netWatch.bodyOnly).
// sockets (nil: none) names the sockets the page opened before.
func startNetWatch(ctx context.Context, spec NetSpec, bodyOnly bool, sockets *socketLog, log func(string, ...any)) (*netWatch, error) {
	ws := spec.Format == NetWebSocket
	return startWatch(ctx, spec, func(r *network.Request, t network.ResourceType) bool {
		return spec.MatchesURL(r.URL) && r.Method != "OPTIONS" && ws == (t == network.ResourceTypeWebSocket)
	}, false, bodyOnly, sockets, log)
}

func startWatch(ctx context.Context, spec NetSpec, match func(*network.Request, network.ResourceType) bool, keepAll, bodyOnly bool, sockets *socketLog, log func(string, ...any)) (*netWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &netWatch{spec: spec, log: log, match: match, keepAll: keepAll, bodyOnly: bodyOnly, sockets: sockets, resps: map[network.RequestID]*netResp{},
		changed: make(chan struct{}, 1), work: make(chan netJob, 64), done: make(chan struct{}), cancel: cancel}
	if err := chromedp.Listen(ctx, w.event); err != nil {
		cancel()
		return nil, err
	}
	go w.run(ctx)
	return w, nil
}

// Stop ends the watch and waits for its goroutine; nil is a no-op.
func (w *netWatch) Stop() {
	if w == nil {
		return
	}
	w.cancel()
	<-w.done
}

func (w *netWatch) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *netWatch) ask(j netJob) {
	select {
	case w.work <- j:
	default: // full: a page firing requests faster than CDP answers; the body fallback remains
	}
}

// event runs on chromedp's reading goroutine: it only records and hands
// the commands to run.
func (w *netWatch) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request == nil || !w.match(e.Request, e.Type) {
			return
		}
		// A new request, or the same id after a redirect: its body starts over.
		w.take(e.RequestID, &netResp{url: e.Request.URL})
	case *network.EventResponseReceived:
		if r := w.resps[e.RequestID]; r != nil && r.finished.IsZero() {
			if e.Response != nil {
				r.mime, r.charset = e.Response.MimeType, e.Response.Charset
				r.declared = declaredCharset(headerValue(e.Response.Headers, "Content-Type"))
			}
			if !w.bodyOnly {
				w.ask(netJob{id: e.RequestID})
			}
		}
	case *network.EventDataReceived:
		if r := w.resps[e.RequestID]; r != nil && len(e.Data) > 0 {
			r.chunks = append(r.chunks, append([]byte(nil), e.Data...))
			w.signal()
		}
	case *network.EventEventSourceMessageReceived:
		if r := w.resps[e.RequestID]; r != nil {
			r.esMsgs = append(r.esMsgs, e.Data)
			w.signal()
		}
	case *network.EventWebSocketCreated:
		if w.match(&network.Request{URL: e.URL, Method: "GET"}, network.ResourceTypeWebSocket) {
			w.take(e.RequestID, &netResp{url: e.URL, ws: true})
		}
	case *network.EventWebSocketFrameReceived:
		r := w.resps[e.RequestID]
		if r == nil {
			// A socket the page opened before the watch began.
			if u, ok := w.sockets.url(e.RequestID); ok && w.match(&network.Request{URL: u, Method: "GET"}, network.ResourceTypeWebSocket) {
				r = &netResp{url: u, ws: true}
				w.take(e.RequestID, r)
			}
		}
		if r != nil && r.ws && r.finished.IsZero() && e.Response != nil && e.Response.Opcode == 1 && len(e.Response.PayloadData) > 0 {
			frame := append([]byte(nil), e.Response.PayloadData...)
			if !strings.HasSuffix(string(frame), wsSep) {
				frame = append(frame, wsSep...)
			}
			r.chunks = append(r.chunks, frame)
			w.signal()
		}
	case *network.EventWebSocketClosed:
		if r := w.resps[e.RequestID]; r != nil && r.ws && r.finished.IsZero() {
			r.finished, r.body = time.Now(), append([]byte{}, joinChunks(r.chunks)...)
			w.signal()
		}
	case *network.EventLoadingFinished:
		if r := w.resps[e.RequestID]; r != nil && r.finished.IsZero() {
			r.finished = time.Now()
			w.ask(netJob{id: e.RequestID, settle: true})
		}
	case *network.EventLoadingFailed:
		if r := w.resps[e.RequestID]; r != nil && r.finished.IsZero() {
			r.finished, r.failed = time.Now(), e.ErrorText
			if e.Canceled {
				// A page that has read its stream's end marker often
				// cancels the rest: what arrived is the body.
				r.failed, r.canceled = "canceled by the page", true
				w.ask(netJob{id: e.RequestID, settle: true})
			}
			w.signal()
		}
	}
}

// take makes r the response of id (the last one, or one more with
// keepAll). The caller holds mu.
func (w *netWatch) take(id network.RequestID, r *netResp) {
	if _, ok := w.resps[id]; !ok {
		if !w.keepAll {
			clear(w.resps)
			w.order = w.order[:0]
		}
		w.order = append(w.order, id)
	}
	w.id, w.resps[id] = id, r
}

// socketLog is a tab's WebSocket URLs by request id, kept from before its
// page loads (a socket's URL comes only with webSocketCreated).
type socketLog struct {
	mu   sync.Mutex
	urls map[network.RequestID]string
}

// startSocketLog keeps the WebSocket URLs of the tab of ctx until ctx ends.
func startSocketLog(ctx context.Context) (*socketLog, error) {
	l := &socketLog{urls: map[network.RequestID]string{}}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventWebSocketCreated); ok {
			l.mu.Lock()
			l.urls[e.RequestID] = e.URL
			l.mu.Unlock()
		}
	})
	return l, err
}

// url is the socket's URL; a nil log knows none.
func (l *socketLog) url(id network.RequestID) (string, bool) {
	if l == nil {
		return "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.urls[id]
	return u, ok
}

// run makes the CDP calls the events ask for, off the reading goroutine.
func (w *netWatch) run(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-w.work:
			if j.settle {
				w.settle(ctx, j.id)
			} else {
				w.stream(ctx, j.id)
			}
		}
	}
}

func (w *netWatch) stream(ctx context.Context, id network.RequestID) {
	res, err := chromedp.Call(ctx, network.StreamResourceContent, network.StreamResourceContentParams{RequestID: id})
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.resps[id]
	if r == nil {
		return
	}
	if err != nil {
		if !w.keepAll {
			w.log("driver: network: streaming the response was refused; its body is read when it ends", "err", err)
		}
		return
	}
	r.streamed, r.buffered = true, append([]byte(nil), res.BufferedData...)
	w.signal()
}

// settle fixes the body of a finished response: the streamed bytes, the
// EventSource messages, or else getResponseBody.
func (w *netWatch) settle(ctx context.Context, id network.RequestID) {
	w.mu.Lock()
	r := w.resps[id]
	if r == nil {
		w.mu.Unlock()
		return
	}
	canceled, sse, declared, charset := r.canceled, w.sse(r), r.declared, r.charset
	var body []byte
	if r.buffered != nil || len(r.chunks) > 0 {
		body = append(append([]byte(nil), r.buffered...), joinChunks(r.chunks)...)
	}
	if len(body) == 0 && len(r.esMsgs) > 0 {
		var b strings.Builder
		for _, m := range r.esMsgs {
			for _, l := range strings.Split(m, "\n") {
				b.WriteString("data: " + l + "\n")
			}
			b.WriteString("\n")
		}
		body = []byte(b.String())
	}
	w.mu.Unlock()
	var err error
	if len(body) == 0 && !canceled {
		var res network.GetResponseBodyResult
		res, err = chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
		if err == nil {
			body = res.Body
			how := "as sent (base64)"
			if !res.Base64encoded {
				// Chromium decoded it by its charset: back to the bytes.
				var ok bool
				if body, ok = undecode(res.Body, charset); ok {
					how = "re-encoded from Chromium's " + cmp.Or(charset, "default windows-1252") + " text"
				} else {
					how = "as Chromium decoded it (" + cmp.Or(charset, "default") + "): its text fits no other reading"
				}
			}
			if !w.keepAll {
				w.log("driver: network: the stream gave no bytes; read the body with getResponseBody", "bytes", len(body), "how", how)
			}
		}
	}
	body = bodyText(body, sse, declared)
	w.mu.Lock()
	if w.resps[id] == r {
		r.body, r.bodyErr = body, err
		if r.body == nil && err == nil {
			r.body = []byte{}
		}
	}
	w.mu.Unlock()
	w.signal()
}

// sse reports whether r's body is read as server-sent events (UTF-8 by
// their standard): the site says so, or (the probe) its MIME type does.
func (w *netWatch) sse(r *netResp) bool {
	if w.spec.Format != "" {
		return w.spec.Format == NetSSE
	}
	return strings.EqualFold(r.mime, "text/event-stream")
}

// netState is what the watch has of the answer's response now.
type netState struct {
	URL      string
	Seen     bool      // a matching request was sent
	Bytes    int       // bytes so far
	Ended    bool      // the response ended and its body is settled
	EndedAt  time.Time // when loadingFinished (or loadingFailed) came
	Failed   string    // loadingFailed's error
	Body     []byte    // the whole body, once Ended
	BodyErr  error
	Streamed bool
	WS       bool // a WebSocket: Body is the frames so far while it is open
}

func (r *netResp) state() netState {
	n := len(r.buffered)
	for _, c := range r.chunks {
		n += len(c)
	}
	st := netState{URL: r.url, Seen: true, Bytes: n, EndedAt: r.finished, Failed: r.failed, Streamed: r.streamed, WS: r.ws}
	if r.ws && r.finished.IsZero() {
		st.Body = joinChunks(r.chunks) // the frames so far: an open socket's body
		return st
	}
	st.Ended = !r.finished.IsZero() && (r.failed != "" && !r.canceled || r.body != nil || r.bodyErr != nil)
	if st.Ended {
		st.Body, st.BodyErr = r.body, r.bodyErr
		if r.canceled && len(r.body) > 0 {
			st.Failed = "" // canceled once its bytes were in: they are the body
		}
	}
	return st
}

// state is the last matching response's state.
func (w *netWatch) state() netState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.resps[w.id]; r != nil {
		return r.state()
	}
	return netState{}
}

// states is every kept response's state, in the order they were sent.
func (w *netWatch) states() []netState {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]netState, 0, len(w.order))
	for _, id := range w.order {
		out = append(out, w.resps[id].state())
	}
	return out
}

// netEndWait bounds the wait for a response to end once the page shows
// that the answer did (its done bar can come before the last CDP event).
const netEndWait = 2 * time.Second

// waitEnd waits up to d for the response to end and returns its state.
func (w *netWatch) waitEnd(ctx context.Context, d time.Duration) netState {
	w.waitFor(ctx, d, func() bool {
		st := w.state()
		return st.Ended || !st.Seen
	})
	return w.state()
}

// waitFor waits up to d (or ctx) for done to hold, looking again at each
// change the events signal.
func (w *netWatch) waitFor(ctx context.Context, d time.Duration, done func() bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			return
		case <-w.changed:
		}
	}
}

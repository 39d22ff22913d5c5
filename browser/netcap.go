package browser

import (
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
type netWatch struct {
	spec NetSpec
	log  func(msg string, args ...any)

	mu       sync.Mutex
	id       network.RequestID // the answer's request: the last match
	buffered []byte            // streamResourceContent's bufferedData
	chunks   [][]byte          // dataReceived's data, in order
	esMsgs   []string          // EventSource messages, when no bytes streamed
	streamed bool              // streamResourceContent took
	finished time.Time         // loadingFinished
	failed   string            // loadingFailed's error
	canceled bool              // the page canceled it (after reading its end?)
	body     []byte            // the whole body, once finished
	bodyErr  error
	changed  chan struct{} // a signal per change, for a waiter (cap 1)
	work     chan network.RequestID
	done     chan struct{}
	cancel   context.CancelFunc
}

// startNetWatch starts watching the tab of ctx for responses to spec.URL
// (only requests sent from now on: the earlier answers' are not seen).
// Stop ends it.
func startNetWatch(ctx context.Context, spec NetSpec, log func(string, ...any)) (*netWatch, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &netWatch{spec: spec, log: log, changed: make(chan struct{}, 1),
		work: make(chan network.RequestID, 16), done: make(chan struct{}), cancel: cancel}
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

// event runs on chromedp's reading goroutine: it only records and hands
// the commands to run.
func (w *netWatch) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request == nil || !strings.Contains(e.Request.URL, w.spec.URL) || e.Request.Method == "OPTIONS" {
			return
		}
		// A new request, or the same id after a redirect: its body starts over.
		w.id, w.buffered, w.chunks, w.esMsgs, w.streamed = e.RequestID, nil, nil, nil, false
		w.finished, w.failed, w.canceled, w.body, w.bodyErr = time.Time{}, "", false, nil, nil
	case *network.EventResponseReceived:
		if e.RequestID == w.id && w.finished.IsZero() {
			select {
			case w.work <- e.RequestID:
			default: // full: a page firing requests faster than CDP answers; the body fallback remains
			}
		}
	case *network.EventDataReceived:
		if e.RequestID == w.id && len(e.Data) > 0 {
			w.chunks = append(w.chunks, append([]byte(nil), e.Data...))
			w.signal()
		}
	case *network.EventEventSourceMessageReceived:
		if e.RequestID == w.id {
			w.esMsgs = append(w.esMsgs, e.Data)
			w.signal()
		}
	case *network.EventLoadingFinished:
		if e.RequestID == w.id && w.finished.IsZero() {
			w.finished = time.Now()
			select {
			case w.work <- "": // "" asks run to settle the body
			default:
			}
		}
	case *network.EventLoadingFailed:
		if e.RequestID == w.id && w.finished.IsZero() {
			w.finished, w.failed = time.Now(), e.ErrorText
			if e.Canceled {
				// A page that has read its stream's end marker often
				// cancels the rest: what arrived is the body.
				w.failed, w.canceled = "canceled by the page", true
				select {
				case w.work <- "":
				default:
				}
			}
			w.signal()
		}
	}
}

// run makes the CDP calls the events ask for, off the reading goroutine.
func (w *netWatch) run(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-w.work:
			if id != "" {
				w.stream(ctx, id)
			} else {
				w.settle(ctx)
			}
		}
	}
}

func (w *netWatch) stream(ctx context.Context, id network.RequestID) {
	res, err := chromedp.Call(ctx, network.StreamResourceContent, network.StreamResourceContentParams{RequestID: id})
	w.mu.Lock()
	defer w.mu.Unlock()
	if id != w.id {
		return
	}
	if err != nil {
		w.log("driver: network: streaming the response was refused; its body is read when it ends", "err", err)
		return
	}
	w.streamed, w.buffered = true, append([]byte(nil), res.BufferedData...)
	w.signal()
}

// settle fixes the body of a finished response: the streamed bytes, the
// EventSource messages, or else getResponseBody.
func (w *netWatch) settle(ctx context.Context) {
	w.mu.Lock()
	id, canceled := w.id, w.canceled
	var body []byte
	if w.buffered != nil || len(w.chunks) > 0 {
		body = append(append([]byte(nil), w.buffered...), joinChunks(w.chunks)...)
	}
	if len(body) == 0 && len(w.esMsgs) > 0 {
		var b strings.Builder
		for _, m := range w.esMsgs {
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
			w.log("driver: network: the stream gave no bytes; read the body with getResponseBody", "bytes", len(body))
		}
	}
	w.mu.Lock()
	if id == w.id {
		w.body, w.bodyErr = body, err
		if w.body == nil && err == nil {
			w.body = []byte{}
		}
	}
	w.mu.Unlock()
	w.signal()
}

// netState is what the watch has of the answer's response now.
type netState struct {
	Seen     bool      // a matching request was sent
	Bytes    int       // bytes so far
	Ended    bool      // the response ended and its body is settled
	EndedAt  time.Time // when loadingFinished (or loadingFailed) came
	Failed   string    // loadingFailed's error
	Body     []byte    // the whole body, once Ended
	BodyErr  error
	Streamed bool
}

func (w *netWatch) state() netState {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.buffered)
	for _, c := range w.chunks {
		n += len(c)
	}
	st := netState{Seen: w.id != "", Bytes: n, EndedAt: w.finished, Failed: w.failed, Streamed: w.streamed}
	st.Ended = !w.finished.IsZero() && (w.failed != "" && !w.canceled || w.body != nil || w.bodyErr != nil)
	if st.Ended {
		st.Body, st.BodyErr = w.body, w.bodyErr
		if w.canceled && len(w.body) > 0 {
			st.Failed = "" // canceled once its bytes were in: they are the body
		}
	}
	return st
}

// netEndWait bounds the wait for a response to end once the page shows
// that the answer did (its done bar can come before the last CDP event).
const netEndWait = 2 * time.Second

// waitEnd waits up to d for the response to end and returns its state.
func (w *netWatch) waitEnd(ctx context.Context, d time.Duration) netState {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		st := w.state()
		if st.Ended || !st.Seen {
			return st
		}
		select {
		case <-ctx.Done():
			return st
		case <-t.C:
			return w.state()
		case <-w.changed:
		}
	}
}

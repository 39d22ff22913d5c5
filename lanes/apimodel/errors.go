package apimodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool"
)

// classify turns a failed call into what the lane needs. ctx is the
// attempt's context from the lane, callCtx the one bounded by the model's
// timeout. Every message passes through redact.
func (m *model) classify(ctx, callCtx context.Context, timeout time.Duration, err error) error {
	// The lane ended the attempt (cancel, shutdown, reclaim): hand back its
	// cause at once; the lane decides the final state from it.
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", m.cfg.Name, context.Cause(ctx))
	}
	if errors.Is(context.Cause(callCtx), errCallTimeout) {
		return lanes.Errorf(spool.ClassTransient, "%s: no answer within the model timeout %s", m.cfg.Name, timeout)
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		return m.httpError(ae)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// The server broke off mid-answer with an error event.
		return lanes.Errorf(spool.ClassTransient, "%s: %s", m.cfg.Name, m.redact(se.Message))
	}
	what := "network error"
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		what = "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		what = "connection reset"
	case isTimeout(err):
		what = "network timeout"
	}
	// Whatever else went wrong on the way (DNS, TLS, a garbled body) may
	// well work next time: transient, which is also the lane's default.
	return lanes.Errorf(spool.ClassTransient, "%s: %s: %s", m.cfg.Name, what, m.redact(err.Error()))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// httpError classes an HTTP error answer: 429, 408, 409 and 5xx are worth
// another try (429 with the server's Retry-After); any other 4xx will fail
// the same way again.
func (m *model) httpError(ae *openai.Error) error {
	msg := strings.TrimSpace(ae.Message)
	if msg == "" {
		msg = strings.TrimSpace(ae.RawJSON())
	}
	if msg == "" && ae.Response != nil {
		msg = http.StatusText(ae.StatusCode)
	}
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	text := fmt.Sprintf("%s: HTTP %d: %s", m.cfg.Name, ae.StatusCode, m.redact(msg))
	code := ae.StatusCode
	switch {
	case code == http.StatusTooManyRequests:
		te := &lanes.TaskError{Class: spool.ClassTransient, Err: errors.New(text)}
		if ae.Response != nil {
			te.RetryAfter = RetryAfter(ae.Response.Header, time.Now())
		}
		return te
	case code >= 500, code == http.StatusRequestTimeout, code == http.StatusConflict:
		return lanes.Errorf(spool.ClassTransient, "%s", text)
	default:
		return lanes.Errorf(spool.ClassPermanent, "%s", text)
	}
}

// RetryAfter reads a response's wait: Retry-After-Ms, else Retry-After in
// seconds or as an HTTP date (relative to now). It returns 0 when there is
// none or it makes no sense; the lane then uses its own backoff.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < math.MaxInt32 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 7*24*3600 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// redact removes the model's key from s: a vendor may echo a key back in
// its message ("Incorrect API key provided: sk-..."), and such messages end
// up in the task file.
func (m *model) redact(s string) string {
	if m.key == "" {
		return s
	}
	s = strings.ReplaceAll(s, m.key, "[redacted]")
	// Vendors often echo a masked key (first and last few characters); a
	// long enough head of the real key is a leak all the same.
	if len(m.key) >= 12 {
		s = strings.ReplaceAll(s, m.key[:len(m.key)-4], "[redacted]")
	}
	return s
}

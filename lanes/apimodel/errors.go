package apimodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// How much of a server's text an error keeps, after redaction.
const (
	keepMessage = 500 // an error's message
	keepBody    = 200 // a body that is neither an answer nor an error
)

// classify turns a failed call into what the lane needs. ctx is the
// attempt's context from the lane, callCtx the one bounded by the model's
// timeout. Every message passes through redact before it is cut.
func (m *model) classify(ctx, callCtx context.Context, timeout time.Duration, err error) error {
	// The lane ended the attempt (cancel, shutdown, reclaim): hand back its
	// cause at once; the lane decides the final state from it.
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", m.cfg.Name, context.Cause(ctx))
	}
	if errors.Is(context.Cause(callCtx), errCallTimeout) {
		return attempt.Errorf(taskfile.ClassTransient, "%s: no answer within the model timeout %s", m.cfg.Name, timeout)
	}
	var te *attempt.TaskError
	if errors.As(err, &te) {
		return err // already classed and redacted
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
	// Whatever else went wrong on the way (DNS, TLS, a broken stream) may
	// well work next time: transient, which is also the lane's default.
	return attempt.Errorf(taskfile.ClassTransient, "%s: %s: %s", m.cfg.Name, what, m.red.keep(err.Error(), keepMessage))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// failure builds the attempt's error from what a server said. where says
// where it said it ("HTTP 413", "error event in the answer stream"); h is
// the response's header, for a wait the server asks for.
func (m *model) failure(e serverError, where string, h http.Header) *attempt.TaskError {
	msg := m.red.keep(e.Message, keepMessage)
	if msg == "" && e.Status != 0 {
		msg = http.StatusText(e.Status)
	}
	label := e.Code
	if label == "" || (e.NumCode != 0 && e.NumCode == e.Status) {
		label = e.Type
	}
	text := m.cfg.Name + ": " + where
	if label != "" {
		text += " (" + m.red.keep(label, 80) + ")"
	}
	if msg != "" {
		text += ": " + msg
	}
	if e.Status >= 300 && e.Status < 400 {
		if loc := h.Get("Location"); loc != "" {
			text += "; redirected to " + m.red.keep(loc, 200) + ": set baseURL to it"
		}
	}
	err := &attempt.TaskError{Class: e.class(), Err: errors.New(text)}
	if err.Class == taskfile.ClassTransient {
		err.RetryAfter = RetryAfter(h, time.Now())
		if err.RetryAfter == 0 {
			err.RetryAfter = retryHint(e.Message)
		}
	}
	return err
}

// class decides whether an error is worth another try. A code or type
// that names the cause wins over the HTTP status: OpenAI answers an
// exhausted quota with 429 (`insufficient_quota`), and no wait fixes it.
//
//   - account: the key or the account behind it (invalid_api_key,
//     insufficient_quota, billing, HTTP 401 and 402). Every task of the
//     key fails the same way until a person fixes the key or pays;
//     spoolgate does not retry, and the class tells the operator where
//     to look.
//   - permanent: the request itself (model_not_found, a context too long,
//     HTTP 400, 403, 404, 413, 422 and the other 4xx, a redirect): the
//     same request fails the same way again; fix the task or the config.
//   - transient: rate limits (rate_limit*, HTTP 429, with the server's
//     wait), overload, HTTP 408, 409 and 5xx, and an error inside a
//     stream that names no known cause.
func (e serverError) class() taskfile.ErrorClass {
	if c, ok := classByName(e.Code); ok {
		return c
	}
	if c, ok := classByName(e.Type); ok {
		return c
	}
	if e.Status != 0 {
		return classByStatus(e.Status)
	}
	// An error inside a 200 answer: a numeric code is a status, and the
	// generic types of OpenAI and Anthropic still say something.
	if e.NumCode != 0 {
		return classByStatus(e.NumCode)
	}
	for _, n := range []string{e.Code, e.Type} {
		switch strings.ToLower(n) {
		case "invalid_request_error", "not_found_error", "permission_error", "request_too_large":
			return taskfile.ClassPermanent
		case "server_error", "api_error", "timeout", "internal_error":
			return taskfile.ClassTransient
		}
	}
	return taskfile.ClassTransient
}

// classByName classes the codes and types that name their cause.
func classByName(name string) (taskfile.ErrorClass, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case n == "":
		return "", false
	case n == "invalid_api_key", n == "insufficient_quota", n == "authentication_error",
		n == "billing_hard_limit_reached", n == "billing_not_active", n == "account_deactivated":
		return taskfile.ClassAccount, true
	case n == "model_not_found", n == "context_length_exceeded":
		return taskfile.ClassPermanent, true
	case strings.HasPrefix(n, "rate_limit"), strings.Contains(n, "overloaded"):
		return taskfile.ClassTransient, true
	}
	return "", false
}

// classByStatus classes an HTTP status.
func classByStatus(code int) taskfile.ErrorClass {
	switch {
	case code == http.StatusUnauthorized, code == http.StatusPaymentRequired:
		return taskfile.ClassAccount
	case code == http.StatusTooManyRequests, code == http.StatusRequestTimeout, code == http.StatusConflict, code >= 500:
		return taskfile.ClassTransient
	default:
		return taskfile.ClassPermanent
	}
}

// The waits that rate-limit messages name: OpenAI's "Please try again in
// 1.5s" (or 20ms, 6m0s), others' "retry after 3 seconds".
var (
	retryGoRe   = regexp.MustCompile(`(?i)(?:try again|retry) (?:in|after) ((?:\d+(?:\.\d+)?(?:ms|s|m|h))+)\b`)
	retryWordRe = regexp.MustCompile(`(?i)(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?) ?(milliseconds?|seconds?|secs?|minutes?|mins?)\b`)
)

// retryHint reads a wait out of an error message, or returns 0.
func retryHint(msg string) time.Duration {
	var d time.Duration
	if m := retryGoRe.FindStringSubmatch(msg); m != nil {
		d, _ = time.ParseDuration(strings.ToLower(m[1]))
	} else if m := retryWordRe.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		unit := time.Second
		switch u := strings.ToLower(m[2]); {
		case strings.HasPrefix(u, "milli"):
			unit = time.Millisecond
		case strings.HasPrefix(u, "min"):
			unit = time.Minute
		}
		d = time.Duration(n * float64(unit))
	}
	if d <= 0 || d > 24*time.Hour {
		return 0
	}
	return d
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

package frontdoor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// stream answers a chat request with server-sent events: a comment line
// at once and then every door.keepAlive while the task waits or runs (its
// state and queue position), then the answer as chat.completion.chunk
// events and [DONE]. A failed task ends the stream with an error event,
// as OpenAI's own stream does; a stream cut (the daemon stopped) has no
// [DONE], and the client's retry with its key joins the same task.
func (d *Door) stream(w http.ResponseWriter, r *http.Request, s submitted, ct chatTask) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	comment := func(at where) {
		fmt.Fprintf(w, ": spoolgate task %s/%s %s\n\n", s.lane, s.id, d.describe(s.lane, s.id, at))
		_ = rc.Flush()
	}
	comment(s.at)
	fin, err := d.waitFinal(r.Context(), s.lane, s.id, time.Time{}, d.cfg.Door.KeepAlive.D(), comment)
	if err != nil {
		if !errorsIsCtx(err) {
			d.log.Error("wait", "err", err)
			event(w, internalError(err.Error()).body())
		}
		return
	}
	if aerr := outcome(fin); aerr != nil {
		event(w, aerr.body())
		_ = rc.Flush()
		return
	}
	t := fin.task
	chunk := func(delta map[string]any, finish any) map[string]any {
		c := map[string]any{"id": completionID(t), "object": "chat.completion.chunk", "created": created(t), "model": ct.Model,
			"system_fingerprint": nil,
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		if ct.Usage {
			c["usage"] = nil
		}
		return c
	}
	event(w, chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, part := range pieces(t.Result, 4096) {
		event(w, chunk(map[string]any{"content": part}, nil))
	}
	event(w, chunk(map[string]any{}, "stop"))
	if ct.Usage {
		event(w, map[string]any{"id": completionID(t), "object": "chat.completion.chunk", "created": created(t), "model": ct.Model,
			"system_fingerprint": nil, "choices": []any{}, "usage": usage(t)})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// describe is a stream's comment: where the task is.
func (d *Door) describe(k taskfile.Kind, id string, at where) string {
	switch at.dir {
	case taskfile.DirIncoming:
		return "state incoming (durable, not yet taken in)"
	case taskfile.DirPending:
		if p := d.position(k, id); p > 0 {
			return fmt.Sprintf("state pending position %d", p)
		}
		return "state pending"
	case taskfile.DirRunning:
		attempt := 0
		if at.task != nil {
			attempt = at.task.Attempt
		}
		return fmt.Sprintf("state running attempt %d", attempt)
	}
	return "state " + string(taskfile.FolderState[at.dir])
}

func event(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\n\n", b)
}

// pieces cuts s into pieces of at most n bytes, on rune boundaries.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		if i == 0 {
			i = n // not UTF-8: cut anywhere
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return append(out, s)
}

func errorsIsCtx(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

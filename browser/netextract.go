package browser

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// NetSpec is a site's `network:` key (see config.SiteNetwork).
type NetSpec = config.SiteNetwork

// The extractor's formats and modes.
const (
	NetSSE       = config.NetSSE
	NetNDJSON    = config.NetNDJSON
	NetText      = config.NetText
	NetWebSocket = config.NetWebSocket
	NetDelta     = config.NetDelta
	NetFull      = config.NetFull
	NetPatch     = config.NetPatch
)

// errNetNoText is returned when the body holds no text at Path.
var errNetNoText = errors.New("the response holds no text at the path")

// wsSep ends each WebSocket frame in a body netcap keeps: the record
// separator, which SignalR-style protocols also put between the records
// of one frame, so a frame of several records is several events.
const wsSep = "\x1e"

// extract takes the answer out of a whole response body. The body is
// decoded as UTF-8 only here, after every chunk was joined, so a
// character split over two chunks survives. A body that is not UTF-8 is
// an error, not replacement characters in a result.
func extract(n NetSpec, body []byte) (string, error) {
	if !utf8.Valid(body) {
		return "", errors.New("the response is not UTF-8")
	}
	switch n.Format {
	case NetText:
		return string(body), nil
	case NetSSE, NetNDJSON, NetWebSocket:
		evs := netEvents(n, body)
		if n.Final != "" {
			// The whole answer, once it ended, beats the pieces: a
			// protocol that sends it has nothing the pieces could add.
			if s, ok := finalText(evs, n.Final); ok {
				return s, nil
			}
		}
		if n.Mode == NetPatch {
			return fromPatches(n, evs)
		}
		return fromEvents(n, evs)
	}
	return "", fmt.Errorf("format %q: want sse, ndjson, websocket or text", n.Format)
}

// netEvent is one event of a body: its data and, on SSE, its type.
type netEvent struct {
	name string // SSE's `event:` ("" for the default, message)
	data string
}

// netEvents are body's events by n's format, only those of n.Events'
// types when it names some.
func netEvents(n NetSpec, body []byte) []netEvent {
	var evs []netEvent
	switch n.Format {
	case NetSSE:
		evs = sseEvents(body)
	case NetNDJSON, NetWebSocket:
		sep := "\n"
		if n.Format == NetWebSocket {
			sep = wsSep
		}
		for _, l := range strings.Split(string(body), sep) {
			if l = strings.TrimSpace(l); l != "" {
				evs = append(evs, netEvent{data: l})
			}
		}
	}
	if len(n.Events) == 0 {
		return evs
	}
	out := evs[:0:0]
	for _, e := range evs {
		if slices.Contains(n.Events, cmp.Or(e.name, "message")) {
			out = append(out, e)
		}
	}
	return out
}

// decodeJSON is an event's JSON value, numbers kept as written.
func decodeJSON(s string) (any, bool) {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// extractBoth takes the answer and a reasoning model's thinking out of a
// whole response body: the thinking at the spec's reasoning path (joined
// as the answer is, kept to the events reasoningWhen selects), and a
// leading <think>…</think> of the answer's text (taskfile.SplitThink),
// in that order, apart by a blank line.
func extractBoth(n NetSpec, body []byte) (answer, thinking string, err error) {
	answer, err = extract(n, body)
	if err != nil && !(errors.Is(err, errNetNoText) && n.Reasoning != "") {
		return "", "", err
	}
	if n.Reasoning != "" && n.Format != NetText {
		r := n
		r.Path, r.When, r.Final = n.Reasoning, n.ReasoningWhen, ""
		if t, rerr := extract(r, body); rerr == nil {
			thinking = strings.TrimSpace(t)
		}
	}
	if err != nil {
		return "", thinking, err // thinking, but no answer: the model stopped before it answered
	}
	answer, inline := taskfile.SplitThink(answer)
	if inline != "" {
		thinking = strings.TrimSpace(strings.TrimSpace(thinking) + "\n\n" + inline)
	}
	return answer, thinking, nil
}

// fromEvents joins (delta) or keeps the last (full) text at Path of each
// JSON event When selects. An event that is not JSON, or has no string
// at Path, adds nothing: streams mix in metadata and markers such as
// `[DONE]`.
func fromEvents(n NetSpec, evs []netEvent) (string, error) {
	paths := splitPaths(n.Path)
	var b strings.Builder
	found := false
	for _, ev := range evs {
		v, ok := decodeJSON(ev.data)
		if !ok {
			continue
		}
		texts, ok := textsAt(v, paths, n.When)
		if !ok {
			continue
		}
		found = true
		if n.Mode == NetFull {
			b.Reset()
		}
		for _, s := range texts {
			b.WriteString(s)
		}
	}
	if !found {
		return "", errNetNoText
	}
	return b.String(), nil
}

// finalText is the last string at path in the events (the whole answer a
// protocol sends once it ended).
func finalText(evs []netEvent, path string) (string, bool) {
	p := splitPath(path)
	for i := len(evs) - 1; i >= 0; i-- {
		if v, ok := decodeJSON(evs[i].data); ok {
			if s, ok := atPath(v, p); ok && s != "" {
				return s, true
			}
		}
	}
	return "", false
}

// textsAt is every string at one of paths (each read in turn) in v, with
// `*` standing for each element of an array; when keeps those whose
// scope (the element of the last `*`, or v) has the fields it names.
// ok is false when no string is there.
func textsAt(v any, paths [][]string, when map[string]string) (out []string, ok bool) {
	for _, p := range paths {
		walkPath(v, v, p, func(s string, scope any) {
			if matches(scope, when) {
				out, ok = append(out, s), true
			}
		})
	}
	return out, ok
}

func walkPath(v, scope any, path []string, f func(string, any)) {
	if len(path) == 0 {
		if s, ok := v.(string); ok {
			f(s, scope)
		}
		return
	}
	k := path[0]
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x[k]; ok {
			walkPath(c, scope, path[1:], f)
		}
	case []any:
		if k == "*" {
			for _, c := range x {
				walkPath(c, c, path[1:], f)
			}
			return
		}
		if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(x) {
			walkPath(x[i], scope, path[1:], f)
		}
	}
}

// matches: each field when names has its value in v (a number or a
// bool as JSON writes it).
func matches(v any, when map[string]string) bool {
	for k, want := range when {
		got, ok := scalarAt(v, splitPath(k))
		if !ok || got != want {
			return false
		}
	}
	return true
}

func scalarAt(v any, path []string) (string, bool) {
	v, ok := valueAt(v, path)
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func splitPaths(p string) [][]string {
	var out [][]string
	for _, a := range strings.Split(p, "|") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, splitPath(a))
		}
	}
	return out
}

// sseEvents returns each server-sent event of body, as the EventSource
// standard reads it: lines of one event end at a blank line, `data:`
// lines (one leading space dropped) join with "\n", `event:` names its
// type, comments and other fields are ignored, CRLF and CR end lines
// too. An event the body cut off before its blank line still counts: the
// stream's end ends it.
func sseEvents(body []byte) []netEvent {
	text := strings.ReplaceAll(strings.ReplaceAll(string(body), "\r\n", "\n"), "\r", "\n")
	var out []netEvent
	var data []string
	name, has := "", false
	flush := func() {
		if has {
			out = append(out, netEvent{name: name, data: strings.Join(data, "\n")})
		}
		data, name, has = nil, "", false
	}
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			flush()
			continue
		}
		field, val, _ := strings.Cut(l, ":")
		val = strings.TrimPrefix(val, " ")
		switch field {
		case "data":
			data, has = append(data, val), true
		case "event":
			name = val
		}
	}
	flush()
	return out
}

// sseData is the data of each server-sent event of body.
func sseData(body []byte) []string {
	evs := sseEvents(body)
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.data
	}
	return out
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// atPath follows path through maps (by key) and arrays (by index); the
// value there must be a string (a number or bool is not answer text).
func atPath(v any, path []string) (string, bool) {
	v, ok := valueAt(v, path)
	s, isString := v.(string)
	return s, ok && isString
}

// valueAt follows path through maps (by key) and arrays (by index).
func valueAt(v any, path []string) (any, bool) {
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// joinChunks joins the byte chunks of a body in order.
func joinChunks(chunks [][]byte) []byte { return bytes.Join(chunks, nil) }

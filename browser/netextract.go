package browser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	NetSSE    = config.NetSSE
	NetNDJSON = config.NetNDJSON
	NetText   = config.NetText
	NetDelta  = config.NetDelta
	NetFull   = config.NetFull
)

// errNetNoText is returned when the body holds no text at Path.
var errNetNoText = errors.New("the response holds no text at the path")

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
	case NetSSE:
		return fromEvents(n, sseData(body))
	case NetNDJSON:
		var evs []string
		for _, l := range strings.Split(string(body), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				evs = append(evs, l)
			}
		}
		return fromEvents(n, evs)
	}
	return "", fmt.Errorf("format %q: want sse, ndjson or text", n.Format)
}

// extractBoth takes the answer and a reasoning model's thinking out of a
// whole response body: the thinking at the spec's reasoning path (joined
// as the answer is), and a leading <think>…</think> of the answer's text
// (taskfile.SplitThink), in that order, apart by a blank line.
func extractBoth(n NetSpec, body []byte) (answer, thinking string, err error) {
	answer, err = extract(n, body)
	if err != nil && !(errors.Is(err, errNetNoText) && n.Reasoning != "") {
		return "", "", err
	}
	if n.Reasoning != "" && n.Format != NetText {
		r := n
		r.Path = n.Reasoning
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
// JSON event. An event that is not JSON, or has no string at Path, adds
// nothing: streams mix in metadata and markers such as `[DONE]`.
func fromEvents(n NetSpec, evs []string) (string, error) {
	path := splitPath(n.Path)
	var b strings.Builder
	found := false
	for _, ev := range evs {
		var v any
		d := json.NewDecoder(strings.NewReader(ev))
		d.UseNumber()
		if d.Decode(&v) != nil {
			continue
		}
		s, ok := atPath(v, path)
		if !ok {
			continue
		}
		found = true
		if n.Mode == NetFull {
			b.Reset()
		}
		b.WriteString(s)
	}
	if !found {
		return "", errNetNoText
	}
	return b.String(), nil
}

// sseData returns the data of each server-sent event of body, as the
// EventSource standard reads it: lines of one event end at a blank line,
// `data:` lines (one leading space dropped) join with "\n", comments and
// other fields are ignored, CRLF and CR end lines too. An event the body
// cut off before its blank line still counts: the stream's end ends it.
func sseData(body []byte) []string {
	text := strings.ReplaceAll(strings.ReplaceAll(string(body), "\r\n", "\n"), "\r", "\n")
	var out, data []string
	has := false
	flush := func() {
		if has {
			out = append(out, strings.Join(data, "\n"))
		}
		data, has = nil, false
	}
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			flush()
			continue
		}
		field, val, _ := strings.Cut(l, ":")
		if field != "data" {
			continue
		}
		data, has = append(data, strings.TrimPrefix(val, " ")), true
	}
	flush()
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
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok
}

// joinChunks joins the byte chunks of a body in order.
func joinChunks(chunks [][]byte) []byte { return bytes.Join(chunks, nil) }

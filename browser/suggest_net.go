// This file holds --suggest's network key: the probe's own responses,
// and which of them carried the answer (netFor).

package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/network"
	"github.com/spoolgate/spoolgate/spool/config"
)

// startNetProbe keeps every fetch, XHR and EventSource response and
// every WebSocket's frames the page gets from now on (sockets names
// those it opened before): one of them may carry the probe's answer.
func startNetProbe(ctx context.Context, sockets *socketLog) (*netWatch, error) {
	return startWatch(ctx, NetSpec{}, func(r *network.Request, t network.ResourceType) bool {
		switch t {
		case network.ResourceTypeFetch, network.ResourceTypeXHR, network.ResourceTypeEventSource, network.ResourceTypeWebSocket:
			return r.Method != "OPTIONS"
		}
		return false
	}, true, false, sockets, func(string, ...any) {})
}

// netMatch is how close a response's text must come to the answer the
// page showed (see likeness) for `network` to be proposed.
const netMatch = 0.9

// netFor proposes the `network` key: the response, of those the probe
// saw end, whose text (taken out by the same extractor the driver uses)
// is the answer the page showed. Reading it gives the text the model
// sent, byte for byte, and its end is proof that the answer ended; a
// page that loses or holds back characters of its own (a typing
// animation that drops the last one) no longer decides the result. It
// waits up to netEndWait for the responses to end. text is the answer
// as that response carried it ("" when none did).
func netFor(ctx context.Context, w *netWatch, shown string) (s Suggestion, text string) {
	w.waitFor(ctx, netEndWait, func() bool {
		for _, st := range w.states() {
			if !st.Ended && !st.WS { // a socket stays open: its frames so far are read
				return false
			}
		}
		return true
	})
	all := w.states()
	spec, score, text := bestNet(all, shown)
	if score < netMatch {
		return Suggestion{Key: "network", Confidence: "none", Why: netNone(len(all))}, ""
	}
	conf := "medium"
	if score >= 0.99 && spec.Reasoning == "" {
		conf = "high"
	}
	how := spec.Format
	switch {
	case spec.Protocol != "":
		how = "the " + spec.Protocol + " protocol: " + config.ProtocolAbout[spec.Protocol]
	case spec.Path != "":
		if name := protocolOf(spec); name != "" {
			how = "the " + name + " protocol: " + how
		}
		how += " events, their text at " + spec.Path
		if spec.Mode == NetFull {
			how += " (the whole text so far)"
		}
		if spec.Reasoning != "" {
			how += "; the model's thinking at " + spec.Reasoning + ", kept apart as reasoning"
		}
	}
	return Suggestion{Key: "network", Selector: netFlow(spec), Network: &spec, Confidence: conf,
		Why: fmt.Sprintf("%s carried the answer (%s; %.0f %% alike with the page's, %d characters): the result is then the model's own text, and the response's end ends it", spec.URL, how, 100*score, utf8.RuneCountInString(text))}, text
}

// bestNet is the way to read one of the responses (latest first on a
// tie) whose text comes closest to shown, with its likeness and text. A
// named protocol that reads a response (protocolFor) is that response's
// way: likeness counts letters alone, so a generic path that drops the
// answer's first piece (a heading mark) or reads a closing status into
// it can score as high as the protocol, which reads it exactly.
func bestNet(all []netState, shown string) (best NetSpec, score float64, text string) {
	for i := len(all) - 1; i >= 0; i-- {
		st := all[i]
		if !st.Ended && !st.WS || st.Failed != "" || st.BodyErr != nil || !utf8.Valid(st.Body) || len(st.Body) == 0 {
			continue
		}
		if spec, sc, got, ok := protocolFor(st, shown); ok {
			if best.Protocol == "" || sc > score {
				best, score, text = spec, sc, got
			}
			continue
		}
		if best.Protocol != "" {
			continue
		}
		specs := netSpecs(st.URL, st.Body, shown)
		for _, spec := range specs {
			got, err := extract(spec, st.Body)
			if err != nil {
				continue
			}
			sc := likeness(got, shown)
			if a, _, ok := answerBeside(spec, specs, st.Body); ok && sc < netMatch {
				// A page whose thinking block the probe could not tell
				// apart shows the thinking and the answer together.
				if ans, th, err := extractBoth(a, st.Body); err == nil {
					sc = max(sc, likeness(th+" "+ans, shown))
				}
			}
			if sc > score {
				best, score, text = spec, sc, got
				if a, think, ok := answerBeside(spec, specs, st.Body); ok {
					// The stream carries a thinking field and an answer
					// field: the answer is the answer field, whatever the
					// page showed (its thinking block, taken for the
					// answer), and the thinking goes to reasoning.
					best, text = a, think
				}
			}
		}
	}
	return best, score, text
}

// protocolFor is the named protocol (config.Protocols) that reads st as
// the page showed it: its answer, or its thinking and answer together
// (a page whose thinking block was taken for the answer), or its
// thinking alone (the same, once the page folded the answer away), at
// least netMatch alike. The spec names the protocol and the response's
// URL part, as the block writes it.
func protocolFor(st netState, shown string) (spec NetSpec, score float64, text string, ok bool) {
	part := urlPart(st.URL)
	if part == "" {
		return NetSpec{}, 0, "", false
	}
	for _, name := range config.ProtocolNames() {
		if plainProtocol(name) {
			continue // the generic search proposes its keys as they are
		}
		short := NetSpec{Protocol: name, URL: part}
		ans, th, err := extractBoth(short.Resolved(), st.Body)
		if err != nil || strings.TrimSpace(ans) == "" {
			continue
		}
		sc := likeness(ans, shown)
		if th != "" {
			sc = max(sc, likeness(th+" "+ans, shown), likeness(th, shown))
		}
		if sc >= netMatch && sc > score {
			spec, score, text, ok = short, sc, ans, true
		}
	}
	return spec, score, text, ok
}

// plainProtocol: the protocol is read by url, format, path, mode and
// reasoning alone (openai-chat), which the generic search finds and
// proposes as they are: a block that names them says what it reads.
func plainProtocol(name string) bool {
	p := config.Protocols[name]
	return len(p.When) == 0 && len(p.ReasoningWhen) == 0 && len(p.Events) == 0 && p.Final == "" && p.Mode != NetPatch
}

// protocolOf names the protocol whose keys spec is (past its URL), or "".
func protocolOf(spec NetSpec) string {
	for _, name := range config.ProtocolNames() {
		p := config.Protocols[name]
		p.URL = spec.URL
		if spec.Reasoning == "" {
			p.Reasoning = ""
		}
		if p.Equal(spec) {
			return name
		}
	}
	return ""
}

// urlPart is the part of a request's URL a key names: its path, each
// id in it a * (pastIDs), with its query when the path is only "/".
func urlPart(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	part := pastIDs(u.EscapedPath())
	if part == "" || part == "/" {
		part = u.RequestURI()
	}
	return part
}

// thinkingPath matches a JSON path whose last key names a reasoning
// model's thinking (reasoning_content, reasoning, thinking, thoughts).
var thinkingPath = regexp.MustCompile(`(?i)(^|[._])(reasoning|thinking|thought|thoughts|think)(_content|_text)?$`)

// answerBeside reads one stream that carries both a thinking field and an
// answer field: given the spec that read one of them, it returns the
// spec that reads the answer, with Reasoning at the thinking field, and
// the answer's text. A sibling key (same parent path, same mode) that is
// not thinking and carries text is the answer; a thinking field beside
// an answer path becomes its Reasoning. ok is false when the stream has
// no such pair.
func answerBeside(spec NetSpec, specs []NetSpec, body []byte) (NetSpec, string, bool) {
	parent := func(p string) string {
		if i := strings.LastIndex(p, "."); i >= 0 {
			return p[:i]
		}
		return ""
	}
	for _, o := range specs {
		if o.Path == spec.Path || o.Mode != spec.Mode || parent(o.Path) != parent(spec.Path) || thinkingPath.MatchString(o.Path) == thinkingPath.MatchString(spec.Path) {
			continue
		}
		if t, err := extract(o, body); err != nil || strings.TrimSpace(t) == "" {
			continue
		}
		ans, think := spec, o
		if thinkingPath.MatchString(spec.Path) {
			ans, think = o, spec
		}
		ans.Reasoning = think.Path
		text, err := extract(ans, body)
		if err != nil {
			return NetSpec{}, "", false
		}
		return ans, text, true
	}
	return NetSpec{}, "", false
}

func netNone(n int) string {
	if n == 0 {
		return "the page fetched nothing and received no WebSocket frame after the send (an answer made in the page): the answer is read from the page"
	}
	return fmt.Sprintf("none of the %d responses the page got after the send carried the answer as text, SSE, JSON lines, WebSocket frames or a known protocol: the answer is read from the page", n)
}

// netFlow is spec as the block writes it (a flow mapping).
func netFlow(spec NetSpec) string {
	if spec.Protocol != "" {
		return "{url: " + js(spec.URL) + ", protocol: " + spec.Protocol + "}"
	}
	parts := []string{"url: " + js(spec.URL), "format: " + spec.Format}
	if spec.Path != "" {
		parts = append(parts, "path: "+spec.Path)
	}
	if spec.Mode != "" {
		parts = append(parts, "mode: "+spec.Mode)
	}
	if spec.Reasoning != "" {
		parts = append(parts, "reasoning: "+spec.Reasoning)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// netSpecs are the ways to read body worth trying: as SSE or JSON lines,
// each string a JSON event holds as the text (joined, or the last one),
// or else the whole body as text. The URL part is the request's path
// (with its query when the path is only "/"). Paths are ranked by how
// much of shown (the answer as the page showed it) their text holds
// before any are left out, so a field that carries the whole answer once
// is tried however much metadata the stream has.
func netSpecs(rawURL string, body []byte, shown string) []NetSpec {
	part := urlPart(rawURL)
	if part == "" {
		return nil
	}
	var evs []string
	format := NetText
	if ws := strings.HasPrefix(rawURL, "ws:") || strings.HasPrefix(rawURL, "wss:"); ws {
		format = NetWebSocket
		for _, e := range netEvents(NetSpec{Format: NetWebSocket}, body) {
			evs = append(evs, e.data)
		}
		if len(evs) == 0 {
			return nil
		}
	} else if isSSE(body) {
		format, evs = NetSSE, sseData(body)
	} else if lines := jsonLines(body); len(lines) > 0 {
		format, evs = NetNDJSON, lines
	}
	if format == NetText {
		return []NetSpec{{URL: part, Format: NetText}}
	}
	var out []NetSpec
	for _, p := range stringPaths(evs, shown) {
		for _, m := range []string{"", NetFull} {
			out = append(out, NetSpec{URL: part, Format: format, Path: p, Mode: m})
		}
	}
	return out
}

// isSSE: the body's first line that is not blank or a comment is an SSE
// field (data:, event:, id:, retry:).
func isSSE(body []byte) bool {
	for _, l := range strings.Split(string(body), "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" || strings.HasPrefix(l, ":") {
			continue
		}
		f, _, ok := strings.Cut(l, ":")
		return ok && (f == "data" || f == "event" || f == "id" || f == "retry")
	}
	return false
}

// jsonLines is body's lines when every one that is not blank is a JSON
// object or array (one event a line); else nil.
func jsonLines(body []byte) []string {
	var out []string
	for _, l := range strings.Split(string(body), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if (l[0] != '{' && l[0] != '[') || !json.Valid([]byte(l)) {
			return nil
		}
		out = append(out, l)
	}
	return out
}

// maxPaths bounds the paths netSpecs tries (each is read twice, and
// compared with the page's answer).
const maxPaths = 64

// stringPaths is every path (keys and indexes apart by dots) at which a
// JSON event of evs holds a string, those whose text holds most of
// shown's letters first (the pieces joined, or the longest one: a field
// with the whole answer), then the most frequent; at most maxPaths.
func stringPaths(evs []string, shown string) []string {
	count := map[string]int{}
	joined := map[string]*strings.Builder{}
	longest := map[string]string{}
	var walk func(v any, path string, depth int)
	walk = func(v any, path string, depth int) {
		if depth > 8 {
			return
		}
		switch x := v.(type) {
		case string:
			if path != "" {
				count[path]++
				b := joined[path]
				if b == nil {
					b = &strings.Builder{}
					joined[path] = b
				}
				if b.Len() < 64<<10 {
					b.WriteString(x)
				}
				if len(x) > len(longest[path]) {
					longest[path] = x
				}
			}
		case map[string]any:
			for k, c := range x {
				if !strings.Contains(k, ".") {
					walk(c, strings.TrimPrefix(path+"."+k, "."), depth+1)
				}
			}
		case []any:
			for i, c := range x {
				if i < 4 {
					walk(c, strings.TrimPrefix(fmt.Sprintf("%s.%d", path, i), "."), depth+1)
				}
			}
		}
	}
	for _, ev := range evs {
		var v any
		if json.Unmarshal([]byte(ev), &v) == nil {
			walk(v, "", 0)
		}
	}
	want := letterBag(shown)
	cover := map[string]float64{}
	paths := make([]string, 0, len(count))
	for p := range count {
		paths = append(paths, p)
		cover[p] = max(bagCover(want, joined[p].String()), bagCover(want, longest[p]))
	}
	sort.Slice(paths, func(i, j int) bool {
		a, b := paths[i], paths[j]
		if cover[a] != cover[b] {
			return cover[a] > cover[b]
		}
		if count[a] != count[b] {
			return count[a] > count[b]
		}
		return a < b
	})
	return paths[:min(len(paths), maxPaths)]
}

// netPasses reports whether the config's network key (have) reads the
// probe's answer from one of its responses: the same text as the
// proposal's (answer), or, without one, text as alike the page's
// (shown) as a proposal needs to be. A key that passes is never
// replaced by a proposal.
func netPasses(have *config.SiteNetwork, all []netState, answer, shown string) bool {
	if have == nil {
		return false
	}
	spec := have.Resolved()
	for _, st := range all {
		if !st.Ended && !st.WS || st.Failed != "" || st.BodyErr != nil || !spec.MatchesURL(st.URL) {
			continue
		}
		got, _, err := extractBoth(spec, st.Body)
		if err != nil || strings.TrimSpace(got) == "" {
			continue
		}
		if answer != "" && likeness(got, answer) >= 0.99 || answer == "" && likeness(got, shown) >= netMatch {
			return true
		}
	}
	return false
}

// netCurrent says whether the config's network key reads the same
// response the same way.
func netCurrent(have *config.SiteNetwork, s Suggestion) string {
	switch {
	case have == nil || s.Network == nil:
		return ""
	case have.Resolved().Equal(s.Network.Resolved()):
		return "ok"
	}
	return "reads it otherwise"
}

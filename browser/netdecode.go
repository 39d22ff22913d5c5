package browser

import (
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// How a response body becomes text. The bytes the server sent are the
// truth: an SSE body is UTF-8 by the EventSource standard, whatever its
// header says; NDJSON and plain text honour a charset their
// Content-Type declares, and are UTF-8 without one. Chromium's
// getResponseBody gives a text body already decoded, by the charset the
// header declared or, without one, by its default (windows-1252): a
// charset-less UTF-8 stream comes back as mojibake ("å\u008f‘" for
// "发"). undecode turns such text back into the bytes it was decoded
// from, so every path starts from the same bytes.

// declaredCharset is the charset parameter of a Content-Type header,
// lower-cased ("" when it names none).
func declaredCharset(contentType string) string {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(params["charset"]))
}

// headerValue is a response header's value, whatever the case of its
// name (CDP keeps the server's).
func headerValue(h map[string]any, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// undecode returns the bytes that Chromium decoded into text by charset
// ("" for its default), and whether it could: text that cannot have come
// from that charset is returned unchanged, with false.
func undecode(text []byte, charset string) ([]byte, bool) {
	name := "windows-1252" // Chromium's default, and what latin1 and ascii mean on the web
	if charset != "" {
		enc, err := htmlindex.Get(charset)
		if err != nil {
			return text, false
		}
		if name, err = htmlindex.Name(enc); err != nil {
			return text, false
		}
		if name == "utf-8" {
			return text, true
		}
		if name != "windows-1252" {
			b, err := enc.NewEncoder().Bytes(text)
			if err != nil {
				return text, false
			}
			return b, true
		}
	}
	return undecode1252(text)
}

// win1252 is the WHATWG windows-1252 index for 0x80–0x9F; the five bytes
// that code page leaves undefined decode to the C1 control of the same
// value, which is why x/text's charmap (which refuses them) is not used.
var win1252 = [32]rune{
	0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
	0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
}

func undecode1252(text []byte) ([]byte, bool) {
	out := make([]byte, 0, len(text))
	for s := string(text); s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		switch {
		case r == utf8.RuneError && n == 1:
			return text, false
		case r < 0x80 || r >= 0xA0 && r <= 0xFF:
			out = append(out, byte(r))
		default:
			b, ok := byte1252(r)
			if !ok {
				return text, false // not windows-1252's: Chromium decoded it otherwise
			}
			out = append(out, b)
		}
	}
	return out, true
}

func byte1252(r rune) (byte, bool) {
	for i, x := range win1252 {
		if x == r {
			return byte(0x80 + i), true
		}
	}
	return 0, false
}

// bodyText makes a response's bytes the UTF-8 text the extractor reads:
// SSE as UTF-8 always; anything else in its declared charset, UTF-8
// when it declares none. Bytes that are not valid in that charset stay
// as they are, and the extractor refuses them.
func bodyText(raw []byte, sse bool, declared string) []byte {
	if sse || declared == "" {
		return raw
	}
	enc, err := htmlindex.Get(declared)
	if err != nil {
		return raw
	}
	switch name, _ := htmlindex.Name(enc); name {
	case "utf-8":
		return raw
	case "gbk":
		enc = simplifiedchinese.GB18030 // the Encoding Standard decodes gbk as gb18030, its superset
	}
	b, err := enc.NewDecoder().Bytes(raw)
	if err != nil {
		return raw
	}
	return b
}

// fromPatches builds the one document the events patch and reads Path
// (with When) from it.
func fromPatches(n NetSpec, evs []netEvent) (string, error) {
	var p patcher
	for _, ev := range evs {
		if v, ok := decodeJSON(ev.data); ok {
			if m, ok := v.(map[string]any); ok {
				p.apply(m)
			}
		}
	}
	texts, ok := textsAt(p.doc, splitPaths(n.Path), n.When)
	if !ok {
		return "", errNetNoText
	}
	return strings.Join(texts, ""), nil
}

// patcher applies a JSON-patch stream as DeepSeek's web chat (and
// ChatGPT's delta encoding) sends it: {"p": path apart by "/", "o": op,
// "v": value}. Ops: SET (the default with a path), APPEND (to a string,
// or the items to an array), BATCH (v is a list of patches whose paths
// go on from p). An event with only "v" continues the last patch: the
// same path, the same op; before any path, it is the whole document.
type patcher struct {
	doc  any
	path []string
	op   string
}

func (p *patcher) apply(ev map[string]any) {
	v, hasV := ev["v"]
	if !hasV {
		return // metadata beside the patches ({"updated_at": …})
	}
	ps, hasP := ev["p"].(string)
	op, _ := ev["o"].(string)
	switch {
	case !hasP && op == "" && p.path == nil:
		p.doc = v
		return
	case !hasP && op == "":
		p.doc = p.patch(p.doc, p.path, p.op, v)
		return
	}
	p.one(nil, ps, op, v)
}

// one applies a patch at base+path and makes it the one a bare "v" goes on.
func (p *patcher) one(base []string, path, op string, v any) {
	full := append(slices.Clone(base), splitSlash(path)...)
	op = strings.ToUpper(op)
	if op == "BATCH" || op == "PATCH" {
		items, _ := v.([]any)
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			sp, _ := m["p"].(string)
			so, _ := m["o"].(string)
			if iv, ok := m["v"]; ok {
				p.one(full, sp, so, iv)
			}
		}
		return
	}
	if op == "" {
		op = "SET"
	}
	p.path, p.op = full, op
	p.doc = p.patch(p.doc, full, op, v)
}

// patch returns doc with op applied at path (missing maps made on the way).
func (p *patcher) patch(doc any, path []string, op string, v any) any {
	if len(path) == 0 {
		if op != "APPEND" {
			return v
		}
		switch x := doc.(type) {
		case string:
			s, _ := v.(string)
			return x + s
		case []any:
			if items, ok := v.([]any); ok {
				return append(x, items...)
			}
			return append(x, v)
		case nil:
			return v
		}
		return doc
	}
	k := path[0]
	switch x := doc.(type) {
	case []any:
		i, err := strconv.Atoi(k)
		if err == nil && i < 0 {
			i += len(x)
		}
		if err != nil || i < 0 || i >= len(x) {
			return doc
		}
		x[i] = p.patch(x[i], path[1:], op, v)
		return x
	case map[string]any:
		x[k] = p.patch(x[k], path[1:], op, v)
		return x
	case nil:
		return map[string]any{k: p.patch(nil, path[1:], op, v)}
	}
	return doc
}

func splitSlash(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

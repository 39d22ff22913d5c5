package apimodel

import (
	"strings"

	"github.com/spoolgate/spoolgate/internal/safetext"
)

// redactWindow is the shortest piece of a key that redaction hides: any
// run of text that shares redactWindow consecutive bytes with the key is
// masked, so a key that a server echoes whole, masked ("sk-proj-****Ab12"),
// cut at the end of a body, or split across two messages never survives in
// pieces of that length or more.
const redactWindow = 6

// redactedMark replaces each masked run.
const redactedMark = "[redacted]"

// redactor hides one API key in text that came from a server. It is built
// once per model and is safe for concurrent use (read-only after build).
type redactor struct {
	key   string
	grams map[string]struct{} // every redactWindow-byte substring of key
}

func newRedactor(key string) *redactor {
	r := &redactor{key: key}
	if len(key) >= redactWindow {
		r.grams = make(map[string]struct{}, len(key)-redactWindow+1)
		for i := 0; i+redactWindow <= len(key); i++ {
			r.grams[key[i:i+redactWindow]] = struct{}{}
		}
	}
	return r
}

// redact masks the key in s. It must run on the whole text a server sent
// before anything cuts it: a cut first can leave half a key that no longer
// matches.
func (r *redactor) redact(s string) string {
	if r == nil || r.key == "" || s == "" {
		return s
	}
	if r.grams == nil {
		// A key this short is not a secret worth the name; hide it whole.
		return strings.ReplaceAll(s, r.key, redactedMark)
	}
	// cover[i] says byte i lies in a window that is a piece of the key.
	var cover []bool
	for i := 0; i+redactWindow <= len(s); i++ {
		if _, ok := r.grams[s[i:i+redactWindow]]; !ok {
			continue
		}
		if cover == nil {
			cover = make([]bool, len(s))
		}
		for j := i; j < i+redactWindow; j++ {
			cover[j] = true
		}
	}
	if cover == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if !cover[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(redactedMark)
		for i < len(s) && cover[i] {
			i++
		}
	}
	return b.String()
}

// keep prepares text from a server for an error, a log or a task file:
// the key masked first, then folded onto one line and cut to at most n
// bytes (at a character boundary, with "..." when cut).
func (r *redactor) keep(s string, n int) string {
	return safetext.ClipBytes(strings.Join(strings.Fields(r.redact(s)), " "), n)
}

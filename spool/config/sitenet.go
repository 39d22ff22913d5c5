package config

import (
	"errors"
	"fmt"
)

// SiteNetwork is a site's `network:` key: which of the page's own responses
// carries the answer, and how to take the text out of its body. The page
// sends the request; spoolgate only reads what comes back.
type SiteNetwork struct {
	// URL is a substring of the request's URL ("/api/chat"); the last
	// matching request sent after the message is the answer's.
	URL string `yaml:"url"`
	// Format is the body's shape: sse (lines `data: …`, events apart by a
	// blank line), ndjson (one JSON value a line) or text (the body is
	// the answer).
	Format string `yaml:"format"`
	// Path is where the text is in each JSON event: keys and array
	// indexes apart by dots (choices.0.delta.content). Events without it
	// (metadata, a `[DONE]`) are skipped.
	Path string `yaml:"path"`
	// Mode says what Path holds: delta (the next piece: pieces are joined,
	// the default) or full (the whole answer so far: the last one wins).
	Mode string `yaml:"mode"`
	// Reasoning is where a reasoning model's thinking is in each event
	// (choices.0.delta.reasoning_content), read as Path is: never part of
	// the answer, kept in the task's `reasoning`. Optional; thinking
	// inline in the answer as <think>…</think> is told apart without it.
	Reasoning string `yaml:"reasoning"`
}

// The extractor's formats and modes.
const (
	NetSSE    = "sse"
	NetNDJSON = "ndjson"
	NetText   = "text"

	NetDelta = "delta"
	NetFull  = "full"
)

// Check says what is wrong with the spec, or nil.
func (n SiteNetwork) Check() error {
	if n.URL == "" {
		return errors.New("url: missing: a part of the answer request's URL, such as /api/chat")
	}
	switch n.Format {
	case NetSSE, NetNDJSON:
		if n.Path == "" {
			return fmt.Errorf("path: missing: where the text is in each %s event, such as choices.0.delta.content", n.Format)
		}
	case NetText:
		if n.Reasoning != "" {
			return errors.New("reasoning: a text body has no JSON to look into; drop reasoning or use format sse or ndjson")
		}
		if n.Path != "" {
			return errors.New("path: a text body has no JSON to look into; drop path or use format sse or ndjson")
		}
	case "":
		return errors.New("format: missing: sse, ndjson or text")
	default:
		return fmt.Errorf("format: %q: want sse, ndjson or text", n.Format)
	}
	switch n.Mode {
	case "", NetDelta, NetFull:
	default:
		return fmt.Errorf("mode: %q: want delta (pieces) or full (the whole text so far)", n.Mode)
	}
	return nil
}

package config

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// SiteNetwork is a site's `network:` key: which of the page's own responses
// carries the answer, and how to take the text out of its body. The page
// sends the request; spoolgate only reads what comes back.
type SiteNetwork struct {
	// Protocol names a stream protocol spoolgate knows (Protocols): it
	// fills every other field the key leaves empty, so
	// `{protocol: deepseek-web}` is a whole key and
	// `{protocol: openai-chat, url: /v1/chat}` moves only the URL.
	Protocol string `yaml:"protocol"`
	// URL is a substring of the request's URL ("/api/chat"); the last
	// matching request sent after the message is the answer's. A `*`
	// stands for one path segment, an id that differs from one
	// conversation or message to the next ("/api/chat/*/messages/*"):
	// see MatchesURL.
	URL string `yaml:"url"`
	// Format is the body's shape: sse (lines `data: …`, events apart by a
	// blank line), ndjson (one JSON value a line), websocket (the frames
	// the page receives on a WebSocket to URL, each one an event, or
	// several apart by the record separator U+001E) or text (the body
	// is the answer).
	Format string `yaml:"format"`
	// Path is where the text is in each JSON event: keys and array
	// indexes apart by dots (choices.0.delta.content); `*` stands for
	// every element of an array, in order; several paths apart by `|`
	// are each read, in that order (one event type carries the text
	// here, another there). Events without it (metadata, a `[DONE]`) are
	// skipped.
	Path string `yaml:"path"`
	// Mode says what Path holds: delta (the next piece: pieces are joined,
	// the default), full (the whole answer so far: the last one wins) or
	// patch (the events are JSON patches, {"p": "response/fragments/-1/content",
	// "o": "APPEND", "v": "…"}, that build one document: Path is read
	// from the document they built, at the end).
	Mode string `yaml:"mode"`
	// When keeps only the events (or, on a Path with `*`, the array
	// elements) whose fields have these values: {type: text-delta}. A
	// key is a path as Path is, read from the event (or the element).
	When map[string]string `yaml:"when"`
	// Events, on an SSE body, keeps only the events of these types (the
	// `event:` line): the page's echo of the user's own message or a
	// speech copy of each piece comes in events of other types.
	Events []string `yaml:"events"`
	// Final is where an event carries the whole answer once it has ended
	// (msg_finish_attr.brief): when one does, it is the answer, and the
	// pieces at Path are not joined.
	Final string `yaml:"final"`
	// Reasoning is where a reasoning model's thinking is in each event
	// (choices.0.delta.reasoning_content), read as Path is: never part of
	// the answer, kept in the task's `reasoning`. Optional; thinking
	// inline in the answer as <think>…</think> is told apart without it.
	Reasoning string `yaml:"reasoning"`
	// ReasoningWhen is When for the thinking: {type: reasoning-delta}.
	ReasoningWhen map[string]string `yaml:"reasoningWhen"`
}

// The extractor's formats and modes.
const (
	NetSSE       = "sse"
	NetNDJSON    = "ndjson"
	NetText      = "text"
	NetWebSocket = "websocket"

	NetDelta = "delta"
	NetFull  = "full"
	NetPatch = "patch"
)

// Protocols are the stream protocols a site's network key can name, as
// the keys each one stands for (each taken from public captures of the
// real streams; docs/sites.md shows them).
var Protocols = map[string]SiteNetwork{
	// OpenAI's chat completions (and every API that copies it: DeepSeek's,
	// Qwen's, Moonshot's, vLLM's): SSE deltas, the thinking of a reasoning
	// model beside them.
	"openai-chat": {URL: "/chat/completions", Format: NetSSE, Path: "choices.0.delta.content", Reasoning: "choices.0.delta.reasoning_content"},
	// Anthropic's messages: content_block_delta events, text_delta for
	// the answer and thinking_delta for the thinking.
	"anthropic-messages": {URL: "/v1/messages", Format: NetSSE, Path: "delta.text", When: map[string]string{"type": "content_block_delta", "delta.type": "text_delta"},
		Reasoning: "delta.thinking", ReasoningWhen: map[string]string{"type": "content_block_delta", "delta.type": "thinking_delta"}},
	// The JavaScript AI SDK's UI message stream (useChat's default):
	// text and reasoning share the field delta, told apart by type.
	"ai-sdk-ui": {URL: "/api/chat", Format: NetSSE, Path: "delta", When: map[string]string{"type": "text-delta"},
		Reasoning: "delta", ReasoningWhen: map[string]string{"type": "reasoning-delta"}},
	// chat.deepseek.com: JSON patches to one response, whose fragments
	// are typed THINK (the thinking) and RESPONSE (the answer).
	"deepseek-web": {URL: "/api/v0/chat/completion", Format: NetSSE, Mode: NetPatch, Path: "response.fragments.*.content", When: map[string]string{"type": "RESPONSE"},
		Reasoning: "response.fragments.*.content", ReasoningWhen: map[string]string{"type": "THINK"}},
	// www.doubao.com: the first piece in STREAM_MSG_NOTIFY, the rest in
	// STREAM_CHUNK patch operations (each also in tts_content, the
	// speech copy, not read), the user's own message echoed in
	// FULL_MSG_NOTIFY (not read), the whole answer in SSE_REPLY_END.
	"doubao-web": {URL: "/chat/completion", Format: NetSSE, Events: []string{"STREAM_MSG_NOTIFY", "STREAM_CHUNK", "SSE_REPLY_END"},
		Path: "content.content_block.*.content.text_block.text|patch_op.*.patch_value.content_block.*.content.text_block.text", When: map[string]string{"block_type": "10000"},
		Final: "msg_finish_attr.brief"},
	// ChatGPT's conversation stream before its delta encoding: each
	// event the whole message so far.
	"chatgpt-legacy": {URL: "/backend-api/conversation", Format: NetSSE, Mode: NetFull, Path: "message.content.parts.0", When: map[string]string{"message.author.role": "assistant"}},
}

// ProtocolAbout says in a few words how each protocol carries the
// answer (site new prints it beside its proposal).
var ProtocolAbout = map[string]string{
	"openai-chat":        "chat completion chunks, the answer at choices.0.delta.content, the thinking at reasoning_content",
	"anthropic-messages": "content_block_delta events, text_delta the answer, thinking_delta the thinking",
	"ai-sdk-ui":          "UI message stream parts, text-delta the answer, reasoning-delta the thinking",
	"deepseek-web":       "JSON patches to one response, its RESPONSE fragments the answer, its THINK fragments the thinking",
	"doubao-web":         "STREAM_MSG_NOTIFY then STREAM_CHUNK patches, the whole answer at SSE_REPLY_END; the echo and the speech copy left out",
	"chatgpt-legacy":     "each event the whole message so far, the assistant's only",
}

// ProtocolNames are the names of Protocols, sorted.
func ProtocolNames() []string { return slices.Sorted(maps.Keys(Protocols)) }

// Resolved is the key with its protocol's fields filled in where the key
// leaves them empty; a key without a protocol (or with an unknown one,
// which Check refuses) is returned as it is.
func (n SiteNetwork) Resolved() SiteNetwork {
	p, ok := Protocols[n.Protocol]
	if !ok {
		return n
	}
	str := func(have *string, def string) {
		if *have == "" {
			*have = def
		}
	}
	str(&n.URL, p.URL)
	str(&n.Format, p.Format)
	str(&n.Path, p.Path)
	str(&n.Mode, p.Mode)
	str(&n.Final, p.Final)
	str(&n.Reasoning, p.Reasoning)
	if n.When == nil {
		n.When = maps.Clone(p.When)
	}
	if n.ReasoningWhen == nil {
		n.ReasoningWhen = maps.Clone(p.ReasoningWhen)
	}
	if n.Events == nil {
		n.Events = slices.Clone(p.Events)
	}
	return n
}

// Equal reports whether two keys read the same way.
func (n SiteNetwork) Equal(o SiteNetwork) bool {
	return n.Protocol == o.Protocol && n.URL == o.URL && n.Format == o.Format && n.Path == o.Path && n.Mode == o.Mode &&
		n.Final == o.Final && n.Reasoning == o.Reasoning && maps.Equal(n.When, o.When) && maps.Equal(n.ReasoningWhen, o.ReasoningWhen) && slices.Equal(n.Events, o.Events)
}

// Check says what is wrong with the spec, or nil.
func (n SiteNetwork) Check() error {
	if n.Protocol != "" {
		if _, ok := Protocols[n.Protocol]; !ok {
			return fmt.Errorf("protocol: %q: want one of %s", n.Protocol, strings.Join(ProtocolNames(), ", "))
		}
		n = n.Resolved()
	}
	if n.URL == "" {
		return errors.New("url: missing: a part of the answer request's URL, such as /api/chat")
	}
	switch n.Format {
	case NetSSE, NetNDJSON, NetWebSocket:
		if n.Path == "" {
			return fmt.Errorf("path: missing: where the text is in each %s event, such as choices.0.delta.content", n.Format)
		}
	case NetText:
		for k, v := range map[string]bool{"reasoning": n.Reasoning != "", "path": n.Path != "", "when": len(n.When) > 0, "reasoningWhen": len(n.ReasoningWhen) > 0, "final": n.Final != "", "events": len(n.Events) > 0} {
			if v {
				return fmt.Errorf("%s: a text body has no JSON to look into; drop %s or use format sse, ndjson or websocket", k, k)
			}
		}
		if n.Mode == NetPatch {
			return errors.New("mode: patch: a text body has no JSON patches; use format sse, ndjson or websocket")
		}
	case "":
		return errors.New("format: missing: sse, ndjson, websocket or text")
	default:
		return fmt.Errorf("format: %q: want sse, ndjson, websocket or text", n.Format)
	}
	switch n.Mode {
	case "", NetDelta, NetFull, NetPatch:
	default:
		return fmt.Errorf("mode: %q: want delta (pieces), full (the whole text so far) or patch (JSON patches to one document)", n.Mode)
	}
	if len(n.Events) > 0 && n.Format != NetSSE {
		return fmt.Errorf("events: only an SSE body has event types; drop events or use format sse")
	}
	if len(n.ReasoningWhen) > 0 && n.Reasoning == "" {
		return errors.New("reasoningWhen: without reasoning (where the thinking is) it selects nothing; add reasoning or drop reasoningWhen")
	}
	for _, p := range strings.Split(n.Path+"|"+n.Reasoning, "|") {
		if strings.Count(p, "*") > 0 && slices.ContainsFunc(strings.Split(p, "."), func(k string) bool { return strings.Contains(k, "*") && k != "*" }) {
			return fmt.Errorf("path: %q: a * stands for a whole key (items.*.text), not part of one", p)
		}
	}
	return nil
}

// MatchesURL reports whether a request's URL is the one n.URL names: it
// holds n.URL, each `*` standing for one path segment's characters (at
// least one, none of / ? #).
func (n SiteNetwork) MatchesURL(u string) bool {
	if !strings.Contains(n.URL, "*") {
		return strings.Contains(u, n.URL)
	}
	parts := strings.Split(n.URL, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile(strings.Join(parts, `[^/?#]+`))
	return err == nil && re.MatchString(u)
}

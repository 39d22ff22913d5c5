package apimodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// answer is what a 2xx response held.
type answer struct {
	text   string
	think  string // reasoning_content (or reasoning): the thinking, apart from text
	finish string // the last finish_reason seen
	form   string // "stream" or "json": how the server answered
	events int    // stream events read
	usage  *usage // the token counts the server reported, if it did
}

// usage is a completion's (or a stream's last chunk's) token counts.
type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// counts is u as the task file keeps it: the details' reasoning and
// cached tokens beside the totals they are part of.
func (u *usage) counts() taskfile.Usage {
	c := taskfile.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		c.CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		c.ReasoningTokens = d.ReasoningTokens
	}
	return c
}

// maxAnswer bounds a JSON answer and one line of a stream.
const maxAnswer = 16 << 20

// readAnswer reads a 2xx body by what it is, not by what was asked for or
// what its Content-Type says: server-sent events, one JSON completion (a
// server that ignores `stream: true`), an error object, or something else,
// which is transient and quoted.
func (m *model) readAnswer(resp *http.Response, job *attempt.Job) (answer, error) {
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	first, err := skipSpace(br)
	if errors.Is(err, io.EOF) {
		return answer{}, m.neither(resp, nil, "an empty body")
	}
	if err != nil {
		return answer{}, err
	}
	if first == '{' || first == '[' {
		return m.readJSON(resp, br, job)
	}
	if first == ':' {
		return m.readStream(resp, br, job)
	}
	p, _ := br.Peek(6)
	for _, field := range []string{"data:", "event:", "id:", "retry:"} {
		if bytes.HasPrefix(p, []byte(field)) {
			return m.readStream(resp, br, job)
		}
	}
	head, _ := io.ReadAll(io.LimitReader(br, maxErrorBody))
	return answer{}, m.neither(resp, head, "")
}

// skipSpace consumes leading white space and returns the next byte, unread.
func skipSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, br.UnreadByte()
	}
}

// neither fails an attempt whose 200 answer is neither a stream nor a
// completion: transient (a gateway's hiccup), with the body's first
// characters so a person can tell what answered.
func (m *model) neither(resp *http.Response, body []byte, what string) *attempt.TaskError {
	if what == "" {
		what = m.red.keep(string(body), keepBody)
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = "none"
	}
	return attempt.Errorf(taskfile.ClassTransient, "%s: HTTP %d answer is neither an event stream nor a chat completion (Content-Type %s): %s",
		m.cfg.Name, resp.StatusCode, m.red.keep(ct, 80), what)
}

// completion is the part of a chat completion, or of one stream chunk,
// that spoolgate reads.
type completion struct {
	Choices []struct {
		Message      *message `json:"message"`
		Delta        *message `json:"delta"`
		FinishReason *string  `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// message is a choice's message or delta: its content and, from a
// reasoning model, its thinking (reasoning_content: DeepSeek, Qwen, Kimi
// and most OpenAI-compatible servers; reasoning: OpenRouter, vLLM).
type message struct {
	Content          any `json:"content"`
	ReasoningContent any `json:"reasoning_content"`
	Reasoning        any `json:"reasoning"`
}

// thinking is the message's reasoning text, if any.
func (m *message) thinking() string {
	if t := contentText(m.ReasoningContent); t != "" {
		return t
	}
	return contentText(m.Reasoning)
}

// hasError reports whether the body carries an error ("error": null does not).
func (c *completion) hasError() bool {
	e := bytes.TrimSpace(c.Error)
	return len(e) > 0 && !bytes.Equal(e, []byte("null"))
}

// add appends the first choice's text to b, and its thinking to think,
// and returns its finish_reason.
func (c *completion) add(b, think *strings.Builder) string {
	if len(c.Choices) == 0 {
		return ""
	}
	ch := c.Choices[0]
	msg := ch.Delta
	if msg == nil {
		msg = ch.Message
	}
	if msg != nil {
		b.WriteString(contentText(msg.Content))
		think.WriteString(msg.thinking())
	}
	if ch.FinishReason != nil {
		return *ch.FinishReason
	}
	return ""
}

// contentText reads a message's content: a string, or a list of parts.
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if part, ok := p.(map[string]any); ok {
				b.WriteString(str(part["text"]))
			}
		}
		return b.String()
	}
	return ""
}

// readJSON reads a body that is one JSON document: a completion, or an
// error object sent with status 200.
func (m *model) readJSON(resp *http.Response, br *bufio.Reader, job *attempt.Job) (answer, error) {
	data, err := io.ReadAll(io.LimitReader(br, maxAnswer+1))
	if err != nil {
		return answer{}, err
	}
	job.Beat()
	if len(data) > maxAnswer {
		return answer{}, attempt.Errorf(taskfile.ClassPermanent, "%s: answer larger than %d MiB", m.cfg.Name, maxAnswer>>20)
	}
	var c completion
	jerr := json.Unmarshal(data, &c)
	if jerr != nil || c.hasError() {
		var v any
		if json.Unmarshal(data, &v) == nil {
			if e, ok := errorFromJSON(v); ok {
				return answer{}, m.failure(e, fmt.Sprintf("error in an HTTP %d answer", resp.StatusCode), resp.Header)
			}
		}
	}
	if jerr != nil || len(c.Choices) == 0 {
		return answer{}, m.neither(resp, data, "")
	}
	var b, think strings.Builder
	a := answer{form: "json", usage: c.Usage}
	a.finish = c.add(&b, &think)
	a.text, a.think = b.String(), think.String()
	return a, nil
}

// readStream reads server-sent events: chunks until [DONE] (or the end of
// the body after a finish_reason), one beat per event. An error event
// fails the attempt with its own class; a stream that ends before the
// answer finished is transient, never a truncated success.
func (m *model) readStream(resp *http.Response, br *bufio.Reader, job *attempt.Job) (answer, error) {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), maxAnswer)
	var (
		b, think strings.Builder
		a        = answer{form: "stream"}
		event    string
		data     []byte
		done     bool
		finished bool
		junk     []byte // the first event that was not JSON
	)
	// dispatch handles one event; a non-nil error ends the attempt.
	dispatch := func() error {
		defer func() { event, data = "", data[:0] }()
		if len(data) == 0 {
			return nil
		}
		a.events++
		job.Beat()
		if string(bytes.TrimSpace(data)) == "[DONE]" {
			done = true
			return nil
		}
		var c completion
		if err := json.Unmarshal(data, &c); err != nil {
			if event == "error" {
				return m.failure(serverError{Message: string(data)}, "error event in the answer stream", resp.Header)
			}
			if junk == nil {
				junk = append([]byte(nil), data...)
			}
			return nil
		}
		if c.hasError() || event == "error" {
			var v any
			_ = json.Unmarshal(data, &v)
			e, ok := errorFromJSON(v)
			if !ok {
				e = serverError{Message: string(data)}
			}
			return m.failure(e, "error event in the answer stream", resp.Header)
		}
		if f := c.add(&b, &think); f != "" {
			a.finish, finished = f, true
		}
		if c.Usage != nil {
			a.usage = c.Usage // on the last chunk, whose choices are empty
		}
		return nil
	}
	for !done && sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return answer{}, err
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event = string(value)
		case "data":
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return answer{}, attempt.Errorf(taskfile.ClassPermanent, "%s: a line of the answer stream is over %d MiB", m.cfg.Name, maxAnswer>>20)
		}
		return answer{}, err
	}
	if err := dispatch(); err != nil { // an event the body ended without a blank line after
		return answer{}, err
	}
	a.text, a.think = b.String(), think.String()
	switch {
	case done || finished:
		return a, nil
	case b.Len() == 0 && junk != nil:
		return answer{}, m.neither(resp, junk, "")
	default:
		return answer{}, attempt.Errorf(taskfile.ClassTransient, "%s: the answer stream ended before the answer finished (%d events, %d characters, no finish_reason or [DONE])",
			m.cfg.Name, a.events, b.Len())
	}
}

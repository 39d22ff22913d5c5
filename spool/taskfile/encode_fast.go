package taskfile

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A task file is rewritten three times on its way (intake, mark, finish),
// and yaml.v3's reflective encoder was the largest user-space cost of a
// task's path (a profile of make bench's throughput bursts: 40 % of the
// lane workers' time outside system calls). appendTask writes the same
// bytes without reflection for the tasks whose every string is one whose
// style it can decide for certain: it copies yaml.v3's rules for those
// strings only, and for anything else (a string that would be quoted
// double, a multi-line string in a nested record, an emoji, text
// yaml.v3 escapes) it reports false and Encode asks yaml.v3 itself.
// TestTask_EncodeFast and FuzzTask_EncodeFast hold the two byte-identical.

// appendTask appends c, whose times are already rounded, as yaml.v3
// (indent 2) encodes it, or reports false.
func appendTask(b []byte, c *Task) ([]byte, bool) {
	e := fastEncoder{b: b, ok: true}
	e.str(0, "taskId", c.TaskID)
	e.strOmit(0, "modelKind", string(c.ModelKind))
	e.str(0, "model", c.Model)
	e.strOmit(0, "batch", c.Batch)
	e.strOmit(0, "title", c.Title)
	e.strOmit(0, "priority", string(c.Priority))
	e.strOmit(0, "output", c.Output)
	e.strOmit(0, "prompt", c.Prompt)
	e.str(0, "content", c.Content)
	e.attachments(c.Attachments, nil)
	e.strOmit(0, "schema", string(c.Schema))
	if c.Sampling != nil {
		return e.b, false // numbers and a list: yaml.v3 writes them
	}
	e.strOmit(0, "state", string(c.State))
	e.int(0, "attempt", c.Attempt)
	e.timeOmit(0, "submittedAt", c.SubmittedAt)
	e.timeOmit(0, "notBefore", c.NotBefore)
	e.timeOmit(0, "startedAt", c.StartedAt)
	e.timeOmit(0, "heartbeatAt", c.HeartbeatAt)
	e.timeOmit(0, "finishedAt", c.FinishedAt)
	e.strOmit(0, "owner", c.Owner)
	e.strOmit(0, "account", c.Account)
	e.strOmit(0, "doorToken", c.DoorToken)
	if c.BrowserPID != 0 {
		e.int(0, "browserPid", c.BrowserPID)
	}
	e.strOmit(0, "error", c.Error)
	e.strOmit(0, "errorClass", string(c.ErrorClass))
	e.attachments(nil, c.AttachmentsChecked)
	if s := c.Send; s != nil {
		e.key(0, "send")
		e.b = append(e.b, '\n')
		e.str(2, "state", string(s.State))
		e.int(2, "attempt", s.Attempt)
		e.strOmit(2, "account", s.Account)
		e.time(2, "sendingAt", s.SendingAt)
		e.timeOmit(2, "sentAt", s.SentAt)
		e.strOmit(2, "conversation", s.Conversation)
	}
	if len(c.Attempts) > 0 {
		e.key(0, "attempts")
		e.b = append(e.b, '\n')
		for _, a := range c.Attempts {
			// "  - " opens the item; its first key follows on that line.
			e.b = append(e.b, "  - "...)
			e.first = true
			e.int(4, "attempt", a.N)
			e.time(4, "claimedAt", a.ClaimedAt)
			e.timeOmit(4, "startedAt", a.StartedAt)
			e.timeOmit(4, "endedAt", a.EndedAt)
			e.strOmit(4, "outcome", a.Outcome)
			e.strOmit(4, "errorClass", string(a.ErrorClass))
			e.strOmit(4, "owner", a.Owner)
			e.strOmit(4, "account", a.Account)
			e.strOmit(4, "method", a.Method)
			e.timeOmit(4, "heldUntil", a.HeldUntil)
			e.strOmit(4, "delivery", string(a.Delivery))
			e.strOmit(4, "conversation", a.Conversation)
			e.strOmit(4, "deliveryReason", a.DeliveryReason)
			if a.PossibleDoubleSend {
				e.key(4, "possibleDoubleSend")
				e.b = append(e.b, " true\n"...)
			}
			e.strOmit(4, "modes", a.Modes)
			e.strOmit(4, "attached", a.Attached)
			e.usage(4, a.Usage)
		}
	}
	e.strOmit(0, "resultFormat", c.ResultFormat)
	e.strOmit(0, "resultMethod", c.ResultMethod)
	e.strOmit(0, "resultCheck", c.ResultCheck)
	e.strOmit(0, "resultDiff", c.ResultDiff)
	e.strOmit(0, "resultFallback", c.ResultFallback)
	e.usage(0, c.Usage)
	e.strOmit(0, "result", c.Result)
	e.strOmit(0, "reasoning", c.Reasoning)
	if len(c.Artifacts) > 0 || len(c.Wrote) > 0 {
		// Their names begin with digits (01.png), which yaml.v3 may quote:
		// its own encoder writes the list.
		return e.b, false
	}
	return e.b, e.ok
}

// fastEncoder accumulates one document; ok turns false at the first
// string it cannot style for certain, and then nothing else matters.
type fastEncoder struct {
	b     []byte
	ok    bool
	first bool // the next key continues a "- " line: no indentation
}

func (e *fastEncoder) key(indent int, k string) {
	if !e.first {
		for range indent {
			e.b = append(e.b, ' ')
		}
	}
	e.first = false
	e.b = append(e.b, k...)
	e.b = append(e.b, ':')
}

// usage writes u as a mapping at indent, its counts two deeper; nothing
// when it says nothing.
func (e *fastEncoder) usage(indent int, u Usage) {
	if u.IsZero() {
		return
	}
	e.key(indent, "usage")
	e.b = append(e.b, '\n')
	e.first = false
	for _, c := range []struct {
		k string
		n int
	}{{"promptTokens", u.PromptTokens}, {"completionTokens", u.CompletionTokens}, {"reasoningTokens", u.ReasoningTokens}, {"cachedTokens", u.CachedTokens}} {
		if c.n != 0 {
			e.int(indent+2, c.k, c.n)
		}
	}
	if u.Estimated {
		e.key(indent+2, "estimated")
		e.b = append(e.b, " true\n"...)
	}
}

func (e *fastEncoder) int(indent int, k string, n int) {
	e.key(indent, k)
	e.b = append(e.b, ' ')
	e.b = strconv.AppendInt(e.b, int64(n), 10)
	e.b = append(e.b, '\n')
}

// time is yaml.v3's timev: RFC 3339 with nanoseconds, plain.
func (e *fastEncoder) time(indent int, k string, t time.Time) {
	e.key(indent, k)
	e.b = append(e.b, ' ')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '\n')
}

func (e *fastEncoder) timeOmit(indent int, k string, t time.Time) {
	if !t.IsZero() {
		e.time(indent, k, t)
	}
}

func (e *fastEncoder) strOmit(indent int, k, s string) {
	if s != "" {
		e.str(indent, k, s)
	}
}

// str writes one string value in the style yaml.v3 picks for it: plain
// where it can be, single-quoted where only an indicator inside (": ",
// " #") or a trailing space forbids plain, literal ("|" or "|-") for a
// multi-line top-level value, `""` for the empty string.
func (e *fastEncoder) str(indent int, k, s string) {
	if !e.ok {
		return
	}
	switch {
	case s == "":
		e.key(indent, k)
		e.b = append(e.b, ` ""`+"\n"...)
	case strings.IndexByte(s, '\n') >= 0:
		if indent != 0 || !literalSafe(s) {
			e.ok = false
			return
		}
		e.key(indent, k)
		e.b = append(e.b, " |"...)
		body := s
		if strings.HasSuffix(s, "\n") {
			body = s[:len(s)-1]
		} else {
			e.b = append(e.b, '-')
		}
		e.b = append(e.b, '\n')
		for line := range strings.SplitSeq(body, "\n") {
			if line != "" {
				e.b = append(e.b, "  "...)
				e.b = append(e.b, line...)
			}
			e.b = append(e.b, '\n')
		}
	default:
		quote, ok := lineStyle(s)
		if !ok {
			e.ok = false
			return
		}
		e.key(indent, k)
		e.b = append(e.b, ' ')
		if !quote {
			e.b = append(e.b, s...)
		} else {
			e.b = append(e.b, '\'')
			e.b = append(e.b, strings.ReplaceAll(s, "'", "''")...)
			e.b = append(e.b, '\'')
		}
		e.b = append(e.b, '\n')
	}
}

// lineStyle decides a one-line string that yaml.v3 resolves as a string
// when unquoted: it starts with a letter or a printable non-ASCII
// character (so it is no number, date, null or indicator) and is not one
// of the words YAML reads as a bool or null. It is plain unless a block
// indicator inside or a trailing space forbids that; then single-quoted.
// ok is false for anything else, and for any character yaml.v3 would
// escape (a control, a tab, a line break of Unicode's, a character
// outside the Basic Multilingual Plane).
func lineStyle(s string) (quote, ok bool) {
	if c := s[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf) {
		return false, false
	}
	if reservedWord(s) {
		return false, false
	}
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case escaped(r, w):
			return false, false
		case r == ':' && (i+1 == len(s) || s[i+1] == ' '):
			quote = true
		case r == '#' && s[i-1] == ' ':
			quote = true
		}
		i += w
	}
	if s[len(s)-1] == ' ' {
		quote = true
	}
	return quote, true
}

// literalSafe reports whether yaml.v3 writes the multi-line s as a literal
// block this encoder reproduces: no indentation indicator (it does not
// start with a space or a break), chomping "|" or "|-" only (it does not
// end in two breaks), no space before a break or at the end (which turn
// yaml.v3 to double quotes), and no character it would escape.
func literalSafe(s string) bool {
	if s[0] == ' ' || s[0] == '\n' || strings.HasSuffix(s, "\n\n") || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n':
		case escaped(r, w):
			return false
		case r == ' ' && i+1 < len(s) && s[i+1] == '\n':
			return false
		}
		i += w
	}
	return true
}

// escaped reports whether yaml.v3 would not write the character r (w bytes
// of UTF-8) as itself in a plain, single-quoted or literal scalar: a
// control (a tab, a break), or past ASCII anything printable refuses, and
// a byte that is not UTF-8.
func escaped(r rune, w int) bool {
	if r >= utf8.RuneSelf {
		return !printable(r) || r == utf8.RuneError && w == 1
	}
	return r < ' ' || r == 0x7f
}

// printable is yaml.v3's is_printable for a character past ASCII, less
// Unicode's line and paragraph separators (breaks to it) and everything
// outside the BMP (escaped by it; Encode's stand-ins deal with those).
func printable(r rune) bool {
	switch {
	case r == 0x2028 || r == 0x2029 || r == 0xFEFF:
		return false
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD:
		return true
	}
	return false
}

// reservedWord: the words YAML 1.1 or 1.2 reads as a bool or null, in any
// case (yaml.v3 quotes some spellings of them and not others; all of them
// go to yaml.v3).
func reservedWord(s string) bool {
	if len(s) > 5 {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
		return true
	}
	return false
}

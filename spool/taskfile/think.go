package taskfile

import "strings"

// The tags a reasoning model wraps its thinking in when it streams it
// inline, before the answer (DeepSeek-R1, Qwen3, QwQ and their kin).
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitThink tells a reasoning model's inline thinking from its answer:
// text that begins (after white space) with <think>…</think> has that
// block as its thinking and the rest as its answer; several blocks in a
// row are one thinking, apart by a blank line. A <think> never closed is
// all thinking: the model stopped before it answered, and the answer is
// empty. Text that does not begin with <think> is all answer: a tag
// later in it is the answer's own words (an answer about the tag). Both
// parts are trimmed of surrounding white space.
func SplitThink(text string) (answer, thinking string) {
	rest := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(rest, thinkOpen) {
		return text, ""
	}
	var parts []string
	for strings.HasPrefix(rest, thinkOpen) {
		body, after, closed := strings.Cut(rest[len(thinkOpen):], thinkClose)
		if t := strings.TrimSpace(body); t != "" {
			parts = append(parts, t)
		}
		if !closed {
			return "", strings.Join(parts, "\n\n")
		}
		rest = strings.TrimLeft(after, " \t\r\n")
	}
	return strings.TrimSpace(rest), strings.Join(parts, "\n\n")
}

package chatuistand

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// ReasoningUIs are the bundled AI-chat libraries that draw a reasoning
// model's thinking in a collapsible block of the answer's bubble, the way
// their own examples do (Ant Design X's Think, TDesign's ChatThinking).
// Their pages ask the bot with ?sse=openai and get a DeepSeek-like
// stream: the thinking first as choices[0].delta.reasoning_content, then
// the answer, Markdown, as choices[0].delta.content. They are kept apart
// from UIs, whose plain one-paragraph bot the older tests are built on.
var ReasoningUIs = []string{"antdx", "tdesign"}

func init() {
	Packages["antdx"] = "@ant-design/x"
	Packages["tdesign"] = "@tdesign-react/chat"
}

// ThinkingMark starts every thinking ThinkingFor writes: a result that
// holds it holds the thinking.
const ThinkingMark = "Thinking it over:"

// ThinkingFor is what the bot thinks before it answers text: a few
// sentences of plain prose that name the text's length.
func ThinkingFor(text string) string {
	return fmt.Sprintf("%s the user wrote %d characters and wants a short document. "+
		"I will give it a heading, two points and a code block, then close with one line.",
		ThinkingMark, utf8.RuneCountInString(text))
}

// MarkdownAnswerFor is the bot's answer to text on a reasoning page: a
// short Markdown document (a heading, a list with inline code and bold,
// a fenced code block in the middle, a closing paragraph), so that the
// answer's end is after a code block whose own buttons show mid-stream.
func MarkdownAnswerFor(text string) string {
	n := utf8.RuneCountInString(text)
	return fmt.Sprintf("## Notes on %d characters\n\n"+
		"- The message had **%d** characters.\n"+
		"- Its first word, cleaned, is `%s`.\n\n"+
		"```go\nfmt.Println(%d) // the count\n```\n\n"+
		"That is the whole answer, and it ends here.", n, n, firstWord(text), n)
}

// firstWord is text's first word without Markdown's punctuation, at most
// 20 characters ("nothing" or "symbols" when there is none).
func firstWord(text string) string {
	f := strings.Fields(text)
	if len(f) == 0 {
		return "nothing"
	}
	w := strings.Trim(f[0], "*_`#[]()<>!~|\\")
	if w == "" {
		return "symbols"
	}
	if utf8.RuneCountInString(w) > 20 {
		w = string([]rune(w)[:20])
	}
	return w
}

// openAIChunk is one event of the ?sse=openai stream.
func openAIChunk(field, piece string) []byte {
	b, _ := json.Marshal(map[string]any{
		"object":  "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]string{field: piece}}},
	})
	return b
}

// reasoningEvents are the ?sse=openai stream's events for text, in
// order: the thinking's pieces, the answer's, then [DONE].
func reasoningEvents(text string) []string {
	var evs []string
	for _, p := range pieces(ThinkingFor(text), 3) {
		evs = append(evs, string(openAIChunk("reasoning_content", p)))
	}
	for _, p := range pieces(MarkdownAnswerFor(text), 3) {
		evs = append(evs, string(openAIChunk("content", p)))
	}
	return append(evs, "[DONE]")
}

// writeEvent writes one SSE event.
func writeEvent(w http.ResponseWriter, data string) error {
	_, err := io.WriteString(w, "data: "+data+"\n\n")
	return err
}

package chatstand

import (
	"embed"
	"path"
	"slices"
	"strings"
)

// corpusFS holds the Markdown answers a message picks with `[[md=NAME]]`:
// corpus/NAME.md, streamed without its trailing newlines. Between them
// they have h1–h3, nested bullet and numbered lists, fenced code with a
// language, GFM tables with alignment, links, blockquotes, emphasis, inline
// code, CJK and emoji, and answers that end in a link (release-notes,
// links, long-report) or in a table (table-end, emoji-table).
//
//go:embed corpus/*.md
var corpusFS embed.FS

// Corpus lists the names of the Markdown answers, sorted.
func Corpus() []string {
	ents, _ := corpusFS.ReadDir("corpus")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".md"))
	}
	slices.Sort(names)
	return names
}

// CorpusAnswer is the Markdown the stand-in streams for `[[md=name]]`.
func CorpusAnswer(name string) (string, bool) {
	b, err := corpusFS.ReadFile(path.Join("corpus", name+".md"))
	if err != nil {
		return "", false
	}
	return strings.TrimRight(string(b), "\n"), true
}

// MarkdownFor is exactly the text a page with a Markdown renderer receives
// for content (what its SSE stream carries, delta by delta): the corpus
// answer `[[md=NAME]]` names, "" for `[[empty]]`, otherwise AnswerFor's.
// The error turn (`[[errorturn]]`) streams no answer at all.
func MarkdownFor(content string) string {
	d := parseDirectives(content)
	switch {
	case d.empty || d.errorTurn:
		return ""
	case d.md != "":
		if md, ok := CorpusAnswer(d.md); ok {
			return md
		}
		return "No corpus answer is named " + d.md + "."
	case strings.Contains(strings.ToLower(content), "markdown document"):
		// A request for a document (spoolgate's default probe) gets
		// one, as a model would answer it: headings, a list, code.
		md, _ := CorpusAnswer("release-notes")
		return md
	}
	return AnswerFor(content) + mediaMarkdown(content) + plantedMarkdown(content)
}

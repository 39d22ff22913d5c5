package mdlinks

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	// inline links and images, [text](target "title"); the target is
	// taken up to the first space or closing parenthesis.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)
	// reference definitions, [label]: target
	refDef    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)`)
	heading   = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	codeSpan  = regexp.MustCompile("`+[^`]*`+")
	htmlID    = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	linkInTxt = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// slug is GitHub's anchor for a heading's text: the text as rendered
// (links by their text, code spans by their code), lower-cased, every
// character but letters, digits, spaces, hyphens and underscores dropped,
// and each space a hyphen.
func slug(text string) string {
	text = linkInTxt.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// doc is one Markdown file's links and anchors, code blocks left out.
type doc struct {
	links   []string
	anchors map[string]bool
}

func parse(text string) doc {
	d := doc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			s := slug(m[2])
			// GitHub numbers a repeated anchor: x, x-1, x-2.
			if n := seen[s]; n > 0 {
				d.anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				d.anchors[s] = true
			}
			seen[s]++
		}
		bare := codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(bare, -1) {
			d.links = append(d.links, m[1])
		}
		if m := refDef.FindStringSubmatch(bare); m != nil {
			d.links = append(d.links, m[1])
		}
	}
	return d
}

// check lists every broken relative link under root: a target that is
// missing, one that leaves root, and an anchor no heading of its file makes.
func check(root string) ([]string, error) {
	docs := map[string]doc{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == "node_modules" || e.Name() == ".git") {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(p, ".md") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			docs[p] = parse(string(b))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var bad []string
	for p, d := range docs {
		rel, _ := filepath.Rel(root, p)
		for _, link := range d.links {
			u, err := url.Parse(link)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: %s: %v", rel, link, err))
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // a page on the web, not a file of ours
			}
			target := p
			if u.Path != "" {
				target = filepath.Join(filepath.Dir(p), filepath.FromSlash(u.Path))
				if r, err := filepath.Rel(root, target); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
					bad = append(bad, fmt.Sprintf("%s: %s leaves the repository", rel, link))
					continue
				}
				if _, err := os.Stat(target); err != nil {
					bad = append(bad, fmt.Sprintf("%s: %s: no such file", rel, link))
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			td, ok := docs[target]
			if !ok {
				bad = append(bad, fmt.Sprintf("%s: %s: an anchor in a file that is not Markdown", rel, link))
			} else if !td.anchors[u.Fragment] {
				bad = append(bad, fmt.Sprintf("%s: %s: no heading makes #%s", rel, link, u.Fragment))
			}
		}
	}
	return bad, nil
}

// TestLinks: every relative link and anchor of the repository's Markdown
// resolves inside the repository, so no reader follows one into nothing.
func TestLinks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestLinks_Planted: the check finds each kind of broken link planted in a
// small tree, and passes the good ones beside them.
func TestLinks_Planted(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n\n[ok](docs/a.md#the-trust-model-who-writes) [ok2](#top) [web](https://example.com/x)\n"+
		"[gone](docs/missing.md) [outside](../shared/BACKGROUND.md) [noanchor](docs/a.md#nowhere)\n"+
		"`[in code](docs/nothere.md)`\n```\n[in a fence](nothere.md)\n```\n[ref]: docs/gone-too.md\n")
	write("docs/a.md", "# A\n\n## The trust model (who writes)\n\n## `status --json` schema (version 1)\n\n## Repeat\n\n## Repeat\n\n"+
		"[json](#status---json-schema-version-1) [second](#repeat-1) [up](../README.md#top) [third](#repeat-2)\n")
	bad, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: docs/missing.md: no such file",
		"README.md: ../shared/BACKGROUND.md leaves the repository",
		"README.md: docs/a.md#nowhere: no heading makes #nowhere",
		"README.md: docs/gone-too.md: no such file",
		filepath.FromSlash("docs/a.md") + ": #repeat-2: no heading makes #repeat-2",
	}
	got := strings.Join(bad, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("not reported: %s\ngot:\n%s", w, got)
		}
	}
	if len(bad) != len(want) {
		t.Errorf("got %d reports, want %d:\n%s", len(bad), len(want), got)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Who may write what (the trust model)":       "who-may-write-what-the-trust-model",
		"`status --json` schema (version 1)":         "status---json-schema-version-1",
		"Several web sessions: one task per account": "several-web-sessions-one-task-per-account",
		"网页任务失败了怎么办":                                 "网页任务失败了怎么办",
		"检查网站：`spoolgate check`":                     "检查网站spoolgate-check",
		"The latest `make bench` (2 cores, shared)":  "the-latest-make-bench-2-cores-shared",
		"See [the docs](x.md) now":                   "see-the-docs-now",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

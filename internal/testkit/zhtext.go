package testkit

import (
	"regexp"
	"slices"
	"strings"
)

// The Chinese console's check (issue 53): a page rendered for zh-CN shows
// no English word outside user data, ids and code. One definition, so the
// e2e crawl of every page and a package's own page tests find the same
// words English.

// ZhText is a script giving a page's words for a reader: its text and
// its titles, labels and placeholders, without what is marked
// translate="no", code, scripts and styles, and the timeline's tooltips
// (a task's id, batch and model between their labels, which the timeline
// translates). Evaluate it in the page.
const ZhText = `(() => {
  const c = document.documentElement.cloneNode(true);
  c.querySelectorAll('[translate=no],code,pre,script,style,noscript,head,svg title').forEach(e => e.remove());
  const attrs = [...c.querySelectorAll('[title],[placeholder],[aria-label],[alt]')].map(e => [e.title, e.placeholder, e.getAttribute('aria-label'), e.alt].join(' '));
  return c.textContent + ' ' + attrs.join(' ');
})()`

// ZhAllowed are the words a Chinese page keeps in Latin letters: the
// product's, formats', encodings' and units' names, the lanes' names (as the
// folders and the config spell them), and the config file's option.
var ZhAllowed = map[string]bool{"spoolgate": true, "csv": true, "xlsx": true, "json": true, "lines": true, "markdown": true,
	"api": true, "web": true, "id": true, "kib": true, "mib": true, "ms": true, "utc": true, "yaml": true, "config": true,
	"excel": true, "wps": true, "gb": true} // Excel, WPS, GB18030

var latinWord = regexp.MustCompile(`[A-Za-z][A-Za-z'-]*[A-Za-z]`)

// EnglishWords are the words of text (ZhText's answer) in Latin letters
// that ZhAllowed does not list, each once, in the order they appear.
func EnglishWords(text string) []string {
	var left []string
	for _, w := range latinWord.FindAllString(text, -1) {
		if !ZhAllowed[strings.ToLower(w)] && !slices.Contains(left, w) {
			left = append(left, w)
		}
	}
	return left
}

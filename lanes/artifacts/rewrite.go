package artifacts

import (
	"sort"
	"strings"
)

// Rewrite replaces every reference in text to an address of links (an
// image's or link's destination, an autolink, an HTML src or href, the
// address standing alone) with its saved file's path. An address counts
// only where it ends: a longer address that merely begins with it (more
// path, another query) is left alone. Longer addresses go first, so one
// that contains another is replaced whole. HTML-escaped forms (&amp;)
// are replaced too.
func Rewrite(text string, links map[string]string) string {
	if len(links) == 0 {
		return text
	}
	refs := make([]string, 0, len(links)*2)
	to := map[string]string{}
	for r, p := range links {
		if r == "" {
			continue
		}
		refs = append(refs, r)
		to[r] = p
		if e := strings.ReplaceAll(r, "&", "&amp;"); e != r {
			refs = append(refs, e)
			to[e] = p
		}
	}
	sort.Slice(refs, func(i, j int) bool {
		if len(refs[i]) != len(refs[j]) {
			return len(refs[i]) > len(refs[j])
		}
		return refs[i] < refs[j]
	})
	for _, r := range refs {
		text = replaceWhole(text, r, to[r])
	}
	return text
}

// replaceWhole replaces the occurrences of ref in text that end where an
// address ends.
func replaceWhole(text, ref, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, ref)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(ref)
		if ends(text[end:]) && starts(text[:i]) {
			b.WriteString(text[:i])
			b.WriteString(with)
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

// ends reports whether rest (what follows a match) begins where an
// address ends: nothing, a space, a closing bracket or quote, or
// sentence punctuation before one of those.
func ends(rest string) bool {
	if rest == "" {
		return true
	}
	switch c := rest[0]; c {
	case ' ', '\t', '\n', '\r', ')', '"', '\'', '>', '<', ']', '|', '`':
		return true
	case '.', ',', ';', ':', '!':
		return len(rest) == 1 || strings.ContainsRune(" \t\n\r)\"'>]|", rune(rest[1]))
	}
	return false
}

// starts reports whether before (what precedes a match) ends where an
// address may begin: a relative address "/files/a.png" inside
// "https://other.example/files/a.png" is not the same address.
func starts(before string) bool {
	if before == "" {
		return true
	}
	c := before[len(before)-1]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/.-_~%:", c) >= 0)
}

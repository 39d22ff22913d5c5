package artifacts

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// Addresses are the addresses a task's own text names (its content,
// prompt, attachment names, template values): whatever the text asks the
// model to write back, none of them is fetched with the account's
// session. They are kept as normalised paths, so the address the model
// writes need not be spelled as the task spelled it: another host part,
// a query, dot segments, doubled slashes, escapes or letter case do not
// make it another address.
type Addresses struct {
	paths map[string]bool
	texts []string
}

// addrToken is a run of characters an address may hold, with a slash in
// it somewhere.
var addrToken = regexp.MustCompile(`[A-Za-z0-9._~%!$&'*+,;=:@/\\-]*/[A-Za-z0-9._~%!$&'*+,;=:@/\\?#-]*`)

// TextAddresses collects the addresses named in texts.
func TextAddresses(texts ...string) *Addresses {
	a := &Addresses{paths: map[string]bool{}}
	for _, t := range texts {
		if t == "" {
			continue
		}
		a.texts = append(a.texts, t)
		for _, tok := range addrToken.FindAllString(t, -1) {
			if p := normPath(tok); p != "" && p != "/" {
				a.paths[p] = true
			}
		}
	}
	return a
}

// Has reports whether u (resolved against page) is an address the texts
// name: its normalised path is one of theirs, or, resolved relative to
// the page, one of their relative addresses is u.
func (a *Addresses) Has(u, page *url.URL) bool {
	if a == nil || u == nil {
		return false
	}
	p := normPath(u.EscapedPath())
	if p == "" || p == "/" {
		return false
	}
	if a.paths[p] {
		return true
	}
	if page != nil {
		for _, t := range a.texts {
			for _, tok := range addrToken.FindAllString(t, -1) {
				if r, err := page.Parse(strings.TrimSpace(tok)); err == nil && normPath(r.EscapedPath()) == p {
					return true
				}
			}
		}
	}
	return false
}

// normPath reduces an address or a path to a comparable form: the path
// only (scheme, host, query and fragment dropped), unescaped, with
// backslashes as slashes, doubled slashes and dot segments folded, lower
// case, no trailing slash, a leading one.
func normPath(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	for range 3 { // %252F and the like
		u, err := url.PathUnescape(s)
		if err != nil || u == s {
			break
		}
		s = u
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 { // an escaped one counts too: refusing more is safe
		s = s[:i]
	}
	s = strings.ReplaceAll(s, "\\", "/")
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
		if j := strings.IndexByte(s, '/'); j >= 0 {
			s = s[j:]
		} else {
			return ""
		}
	} else if strings.HasPrefix(s, "//") {
		s = strings.TrimLeft(s, "/")
		if j := strings.IndexByte(s, '/'); j >= 0 {
			s = s[j:]
		} else {
			return ""
		}
	}
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	s = path.Clean("/" + s)
	return strings.ToLower(strings.TrimSuffix(s, "/"))
}

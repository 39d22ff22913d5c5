package generated

import (
	"net/url"
	"path"
	"sort"
	"strings"
)

// Prefixes proposes artifactsFrom from the addresses of an
// answer's generated files on a page at pageURL: a path prefix on the
// page's origin, an absolute one elsewhere; each the file's folder
// without the id-like segments at its end (a hash, a uuid, a number), so
// the next answer's files fall under it too. blob: and data: addresses
// need no prefix. Sorted, without repeats.
func Prefixes(pageURL string, addrs []string) []string {
	page, _ := url.Parse(pageURL)
	set := map[string]bool{}
	for _, a := range addrs {
		u, err := url.Parse(a)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		dir := path.Dir(u.EscapedPath())
		segs := strings.Split(strings.Trim(dir, "/"), "/")
		for len(segs) > 0 && idLike(segs[len(segs)-1]) {
			segs = segs[:len(segs)-1]
		}
		if len(segs) == 0 || segs[0] == "" {
			continue // a file at the root: no folder to name
		}
		p := "/" + strings.Join(segs, "/") + "/"
		if page == nil || !strings.EqualFold(page.Host, u.Host) || page.Scheme != u.Scheme {
			p = u.Scheme + "://" + u.Host + p
		}
		set[p] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// idLike: a segment that names one file or one answer rather than a
// place (a hex hash, a uuid, a long number, a random token).
func idLike(s string) bool {
	if len(s) < 6 {
		return false
	}
	digits, hex, other := 0, 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			hex++
		case c == '-' || c == '_':
		default:
			other++
		}
	}
	return other == 0 || (digits >= 3 && len(s) >= 16)
}

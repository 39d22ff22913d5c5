package safetext

import "unicode/utf8"

// ClipBytes keeps the first n bytes of s, cut back to a character's start,
// and marks the cut with "...": for a field whose size is counted in bytes
// (a record's reason, an error quoted into a log line).
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// ClipRunes shortens s to n characters, the last of them "…", for a label
// whose room is counted in characters.
func ClipRunes(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	return string(rs[:n-1]) + "…"
}

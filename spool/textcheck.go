package spool

import (
	"fmt"
	"strings"
	"unicode"
)

// controlAt returns the first control character of s (C0, DEL or C1; NUL
// included) that is not allowed, and its position in characters, or -1.
// Tab and newline are allowed where multiline says so.
func controlAt(s string, multiline bool) (rune, int) {
	i := 0
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\t' || r == '\n')) {
			return r, i
		}
		i++
	}
	return 0, -1
}

// checkText refuses control characters in a field a person wrote: they
// reach operators' terminals (status, logs) and web pages. content and
// prompt may hold tab and newline; one-line fields none at all.
func checkText(field, s string, multiline bool) *RejectError {
	r, at := controlAt(s, multiline)
	if at < 0 {
		return nil
	}
	allowed := "no control characters are allowed here"
	if multiline {
		allowed = "only tab and newline are allowed"
	}
	return rejectf(ClassInvalid, "%s: contains the control character %s at character %d: %s", field, controlName(r), at+1, allowed)
}

func controlName(r rune) string {
	names := map[rune]string{0: "NUL", '\t': "tab", '\n': "newline", '\r': "carriage return", 0x1b: "ESC", 0x7f: "DEL"}
	if n, ok := names[r]; ok {
		return fmt.Sprintf("U+%04X (%s)", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}

// normalizeNewlines turns CRLF (and a lone CR) into LF. YAML already does
// so for the file's own line ends; this covers CRs that arrive through
// escapes ("\r\n" in a quoted string), so that a Windows-style text is
// accepted as the same text with LF, and a CR never reaches a terminal.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

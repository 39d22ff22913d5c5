package taskfile

import (
	"strings"
)

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

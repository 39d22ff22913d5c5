package taskfile

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidAccount reports whether name may name a file of <spool>/accounts/:
// the taskId alphabet, so it can never leave the folder.
func ValidAccount(name string) bool { return ValidTaskID(name) }

// MaxTaskIDBytes bounds a taskId in bytes of UTF-8. A taskId names files:
// ID.yaml, ID.log, ID.error, cancel/ID, and later issues' ID.N.png; file
// systems allow 255 bytes per name (NTFS: 255 UTF-16 units, which 200
// bytes of UTF-8 never exceed), so 200 leaves 55 bytes for any suffix. In
// characters: 200 ASCII, 100 accented Latin or Cyrillic, 66 Chinese or
// Japanese.
const MaxTaskIDBytes = 200

// windowsReserved are the device names Windows refuses as file names,
// alone or before a dot (CON, CON.yaml and con.txt alike).
var windowsReserved = func() map[string]bool {
	m := map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true}
	for i := '0'; i <= '9'; i++ {
		m["COM"+string(i)] = true
		m["LPT"+string(i)] = true
	}
	return m
}()

// TaskIDProblem says why id may not name a task, or "" if it may: 1 to
// MaxTaskIDBytes bytes of letters and digits of any script (combining
// marks after the first, as Devanagari or decomposed Japanese need), '.',
// '_' and '-'; starting with a letter or digit; no "..", no trailing dot;
// not a name Windows reserves. Punctuation, spaces, symbols, emoji and
// control characters are refused, and so are Windows' forbidden
// characters <>:"/\|?*.
func TaskIDProblem(id string) string {
	switch {
	case id == "":
		return "empty"
	case !utf8.ValidString(id):
		return "not valid UTF-8"
	case len(id) > MaxTaskIDBytes:
		return fmt.Sprintf("%d bytes long, over %d (a taskId names files, and file names are limited)", len(id), MaxTaskIDBytes)
	}
	for i, r := range id {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		case i > 0 && (r == '.' || r == '_' || r == '-' || unicode.Is(unicode.M, r)):
		case i == 0:
			return fmt.Sprintf("starts with %s: it must start with a letter or digit", runeName(r))
		default:
			return fmt.Sprintf("contains %s: use letters, digits, '.', '_' or '-'", runeName(r))
		}
	}
	if strings.Contains(id, "..") {
		return "contains \"..\""
	}
	if strings.HasSuffix(id, ".") {
		return "ends with '.', which Windows drops from file names"
	}
	base, _, _ := strings.Cut(id, ".")
	if windowsReserved[strings.ToUpper(base)] {
		return fmt.Sprintf("%q is a device name on Windows (CON, PRN, AUX, NUL, COM0-9, LPT0-9), so no file may be called so", base)
	}
	return ""
}

// ValidTaskID reports whether id may name a task (and so a file): see
// TaskIDProblem.
func ValidTaskID(id string) bool { return TaskIDProblem(id) == "" }

// runeName shows a character in a reason: quoted if printable, else its
// code point, so a reason never carries a control character.
func runeName(r rune) string {
	if unicode.IsPrint(r) && r != '\'' {
		return fmt.Sprintf("'%c' (U+%04X)", r, r)
	}
	return fmt.Sprintf("U+%04X", r)
}

var asciiNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidASCIIName reports whether s is 1 to 128 ASCII letters, digits, '.',
// '_' or '-', starting with a letter or digit, without "..": for names
// that go where only ASCII is safe (service names).
func ValidASCIIName(s string) bool {
	return asciiNameRe.MatchString(s) && !strings.Contains(s, "..")
}

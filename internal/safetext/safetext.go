// Package safetext makes text that users wrote safe to show. Batch names,
// taskIds, models, errors and file names come from files anyone with
// write access to the spool can drop; shown raw, an ESC or a C1 byte in
// them drives the operator's terminal, a bidi override reorders what the
// operator reads, and a leading '=' runs as a formula in a spreadsheet.
//
// Every output of spoolgate that carries such text goes through this
// package: Line and Text for terminals and the status page, CSVCell for
// CSV, JSON for encoded JSON (losslessly), Strings for whole view structs;
// ClipBytes and ClipRunes shorten it to the room a field has.
// The escapes are Go's (\x1b, \u202e), visible and printable, so the
// operator sees that something odd is there; applying them twice changes
// nothing.
package safetext

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal raw: C0 controls,
// DEL, C1 controls (U+0080-U+009F: a UTF-8 terminal still reads U+009B as
// CSI), the bidi embeddings, overrides and isolates (U+202A-U+202E,
// U+2066-U+2069, the "Trojan Source" characters), and the line and
// paragraph separators (U+2028, U+2029), which some viewers break on.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Line returns s for one line of a terminal or a page: every unsafe
// character, tab and newline included, and every byte that is not part of
// valid UTF-8, is replaced by its Go escape (\x1b, \u202e, \xff). Anything
// else, CJK and emoji included, is kept as it is.
func Line(s string) string { return escape(s, false) }

// Text is Line for text of several lines (a result, a status report): it
// keeps newline and tab and escapes everything else Line escapes,
// carriage return included (a lone CR overwrites the line on a terminal).
func Text(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	keep := func(r rune) bool { return multiline && (r == '\n' || r == '\t') }
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (unsafe(r) && !keep(r)) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r) && !keep(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func writeEscape(b *strings.Builder, r rune) {
	if r < 0x100 {
		fmt.Fprintf(b, `\x%02x`, r)
		return
	}
	fmt.Fprintf(b, `\u%04x`, r)
}

// formulaLead are the first characters that make a spreadsheet read a
// cell as a formula (OWASP's CSV injection guidance: '=', '+', '-', '@',
// tab, carriage return).
const formulaLead = "=+-@\t\r"

// CSVCell returns s for a CSV cell that a spreadsheet will open: Text's
// escapes, then, if the cell starts with one of = + - @ tab CR, a leading
// single quote, which spreadsheets take as "this is text". Quoting of
// commas, quotes and line breaks is the CSV writer's job.
func CSVCell(s string) string {
	s = Text(s)
	if s != "" && strings.IndexByte(formulaLead, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// JSON rewrites encoded JSON so that it shows safely on a terminal, with
// the same meaning: encoding/json already escapes C0 controls and U+2028/
// U+2029, but writes DEL, C1 controls and bidi overrides raw. Outside its
// strings JSON is ASCII, so each of those can only be inside a string,
// where \uXXXX means the same character: a decoder gets back exactly what
// was encoded.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x7f && unsafe(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b) + 16)
	out.Write(b[:i])
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x7f && unsafe(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[i : i+n])
		}
		i += n
	}
	return out.Bytes()
}

// Strings applies Line to every exported string field reachable from v,
// a pointer, through structs, pointers, slices, arrays and interfaces. A
// view struct built for showing (a status snapshot) is made safe in one
// call, fields added later included. Strings that are map keys or values
// are left alone.
func Strings(v any) { walk(reflect.ValueOf(v)) }

func walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				walk(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i))
		}
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); s != "" {
				if c := Line(s); c != s {
					v.SetString(c)
				}
			}
		}
	}
}

// ShellArg quotes s as one POSIX shell word, for commands spoolgate
// suggests to its operators (`spoolgate resume web --host H`): a name of
// letters, digits, '.', '_', '-', '+', '@', ':' and '/' stands as it is;
// anything else is single-quoted, so a host name taken from a file name
// (`paused.x;$(id)`) is never a second command when pasted. Control
// characters are then escaped by Text or Line on the way out.
func ShellArg(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-+@:/", r))
	}) < 0 && s[0] != '-' {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package chatstand

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Brief returns a brief of exactly n characters (runes) as an operator
// would write one: lines of about 100 characters with CJK and an emoji,
// a blank line after every fifth, no line break at the end.
func Brief(n int) string {
	var b strings.Builder
	for i := 0; utf8.RuneCountInString(b.String()) < n+1; i++ {
		fmt.Fprintf(&b, "Paragraph %d of a long brief: 中文内容 and an emoji 🎬, with some words to make the line long enough.\n", i)
		if i%5 == 4 {
			b.WriteString("\n")
		}
	}
	r := []rune(b.String())[:n]
	for i := len(r) - 1; i >= 0 && r[i] == '\n'; i-- {
		r[i] = '.'
	}
	return string(r)
}

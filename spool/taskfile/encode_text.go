package taskfile

import (
	"bytes"
	"strings"
)

// yaml.v3's emitter treats every character outside the Basic Multilingual
// Plane (emoji, rarer CJK ideographs) as unprintable: it writes the whole
// scalar double-quoted with \U0001F337 escapes. The text is intact, but a
// person reading the file sees escapes where they wrote 🌷. YAML allows
// these characters as they are, so the task codec swaps each one for an
// unused character of the Private Use Area (printable to yaml.v3, which
// then picks the style it would for the text without emoji), encodes, and
// swaps the characters back in the output.

// privateUse is the BMP's Private Use Area: the stand-ins.
const privateUseFirst, privateUseLast = 0xE000, 0xF8FF

// standIns replaces the non-BMP characters of the strings behind fields by
// private-use characters that none of them contains, and returns the
// mapping back (stand-in → original), or nil if there is nothing to do or
// not enough unused stand-ins (then the escapes stay).
func standIns(fields []*string) map[rune]rune {
	var wide map[rune]bool
	used := map[rune]bool{}
	for _, f := range fields {
		for _, r := range *f {
			switch {
			case r > 0xFFFF:
				if wide == nil {
					wide = map[rune]bool{}
				}
				wide[r] = true
			case r >= privateUseFirst && r <= privateUseLast:
				used[r] = true
			}
		}
	}
	if len(wide) == 0 || len(wide) > privateUseLast-privateUseFirst+1-len(used) {
		return nil
	}
	to := make(map[rune]rune, len(wide))
	back := make(map[rune]rune, len(wide))
	next := rune(privateUseFirst)
	for r := range wide {
		for used[next] {
			next++
		}
		to[r], back[next] = next, r
		next++
	}
	for _, f := range fields {
		*f = strings.Map(func(r rune) rune {
			if s, ok := to[r]; ok {
				return s
			}
			return r
		}, *f)
	}
	return back
}

// restoreStandIns puts the original characters back in encoded YAML.
func restoreStandIns(data []byte, back map[rune]rune) []byte {
	if len(back) == 0 {
		return data
	}
	return bytes.Map(func(r rune) rune {
		if o, ok := back[r]; ok {
			return o
		}
		return r
	}, data)
}

// textFields are the task's free-text fields, which may hold any character.
func (t *Task) textFields() []*string {
	return []*string{&t.TaskID, &t.Model, &t.Batch, &t.Title, &t.Output, &t.Prompt, &t.Content, &t.Owner, &t.Error, &t.Result}
}

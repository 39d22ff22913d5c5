package browser

import (
	"strings"
	"time"
	"unicode/utf8"
)

// answerTrack follows the reads of the answer element while it streams.
// The result is the read taken when the answer has ended, never an
// earlier one: a Markdown renderer shows a link's source while it streams
// and the shorter rendered link once it is whole, so a longer earlier
// read is a wrong result, not a safer one. What the old "never shorter"
// rule guarded against is told by what happened instead:
//
//   - the element was replaced (a new serial at the same count: the page
//     re-rendered its answer): the new element is the answer, logged;
//   - the new read does not continue the old one: its start is not the
//     old start, but the old read ends with what the new one begins
//     with (a virtualised list dropped the top of a long answer): the
//     dropped top is kept, and put back before the final read.
type answerTrack struct {
	last       string
	lastID     int
	stillSince time.Time
	head       string // the top a virtualised list dropped, to put back
	replaced   int    // times the element was replaced
	dropped    int    // times the top was dropped
}

// take records one read; it reports whether the read changed.
func (a *answerTrack) take(text string, id int, now time.Time, d *driver) bool {
	changed := a.stillSince.IsZero() || text != a.last || id != a.lastID
	if !changed {
		return false
	}
	if a.lastID != 0 && id != a.lastID {
		a.replaced++
		if a.replaced == 1 {
			d.log.Info("driver: the page replaced its answer element; reading the new one", "had", utf8.RuneCountInString(a.last), "read", utf8.RuneCountInString(text))
		}
	} else if a.last != "" && text != "" {
		if k := topDropped(a.last, text); k > 0 {
			a.dropped++
			a.head += a.last[:k]
			if a.dropped == 1 {
				d.log.Warn("driver: the answer's top left the page (a virtualised list?); keeping it", "kept", utf8.RuneCountInString(a.head))
			}
		}
	}
	a.last, a.lastID, a.stillSince = text, id, now
	return true
}

// whole is the final read with a dropped top put back.
func (a *answerTrack) whole(final string) string { return a.head + final }

// minOverlap is how much of the new read must repeat the end of the old
// one for the change to count as a dropped top rather than new content.
const minOverlap = 16

// topDropped returns k > 0 when cur continues old[k:]: cur does not start
// the way old does, and old[k:] is a prefix of cur at least minOverlap
// bytes long. Otherwise 0 (a continuation, a re-render of the tail such
// as a link that rendered, or a different text).
func topDropped(old, cur string) int {
	if commonPrefix(old, cur) >= min(len(old), len(cur), minOverlap) {
		return 0 // same start: a continuation or an edit of the tail
	}
	// The longest suffix of old that begins cur.
	for k := 1; k <= len(old)-minOverlap; k++ {
		if !utf8.RuneStart(old[k]) {
			continue
		}
		if strings.HasPrefix(cur, old[k:]) {
			return k
		}
	}
	return 0
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

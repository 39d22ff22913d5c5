package safetext

import "testing"

// TestClip: ClipBytes counts bytes and steps back to a character's start,
// ClipRunes counts characters; both leave text that fits as it is.
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name string
		clip func(string, int) string
		s    string
		n    int
		want string
	}{
		{"bytes, short", ClipBytes, "short", 10, "short"},
		{"bytes, exactly", ClipBytes, "exactly", 7, "exactly"},
		{"bytes, one too long", ClipBytes, "one too long", 11, "one too lon..."},
		{"bytes, inside a two-byte character", ClipBytes, "héllo", 2, "h..."},
		{"bytes, inside a three-byte character", ClipBytes, "日本語", 4, "日..."},
		{"bytes, no room", ClipBytes, "abc", 0, "..."},
		{"bytes, negative room", ClipBytes, "abc", -1, "..."},
		{"runes, short", ClipRunes, "short", 10, "short"},
		{"runes, exactly", ClipRunes, "exactly", 7, "exactly"},
		{"runes, one too long", ClipRunes, "one too long", 11, "one too lo…"},
		{"runes, wide characters", ClipRunes, "日本語です", 3, "日本…"},
		{"runes, room for the mark only", ClipRunes, "abc", 1, "…"},
		{"runes, no room", ClipRunes, "abc", 0, ""},
	} {
		if got := tc.clip(tc.s, tc.n); got != tc.want {
			t.Errorf("%s: clip(%q, %d) = %q, want %q", tc.name, tc.s, tc.n, got, tc.want)
		}
	}
}

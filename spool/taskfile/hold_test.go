package taskfile

import (
	"testing"
	"time"
)

// FuzzDecodeHold: hold files are spoolgate's own, but any file may stand
// in accounts/: decoding must never panic, and what it accepts re-encodes
// to a file it accepts again.
func FuzzDecodeHold(f *testing.F) {
	h := Hold{Until: time.Date(2026, 3, 5, 14, 0, 0, 0, time.UTC), Reason: "Try again in 2 minutes", Site: "s", Wait: "2m0s", Since: time.Date(2026, 3, 5, 13, 58, 0, 0, time.UTC)}
	seed, _ := h.Encode()
	f.Add(seed)
	f.Add([]byte("until: 2026-03-05T14:00:00Z\n"))
	f.Add([]byte("until: x\n"))
	f.Add([]byte("reason: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHold(data)
		if err != nil {
			return
		}
		out, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeHold(out); err != nil {
			t.Fatalf("re-encoded hold does not decode: %v\n%s", err, out)
		}
	})
}

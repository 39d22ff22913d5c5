package taskfile

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Active reports whether the hold still runs at now.
func (h Hold) Active(now time.Time) bool { return h.Err != "" || now.Before(h.Until) }

// Encode renders the hold file.
func (h Hold) Encode() ([]byte, error) {
	h.Until, h.Since = h.Until.UTC().Truncate(time.Millisecond), h.Since.UTC().Truncate(time.Millisecond)
	return yaml.Marshal(h)
}

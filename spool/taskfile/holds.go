package taskfile

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Active reports whether the hold still runs at now: a signed-out or
// challenge hold runs until it is released.
func (h Hold) Active(now time.Time) bool {
	return h.Err != "" || h.Kind != HoldLimit || now.Before(h.Until)
}

// SignIn reports whether the hold is one that signing in ends (a
// signed-out page or a challenge), not a usage limit.
func (h Hold) SignIn() bool { return h.Kind == HoldSignedOut || h.Kind == HoldChallenge }

// What names the hold for people: "held by a usage limit until T",
// "signed out", "held by a challenge".
func (h Hold) What() string {
	switch h.Kind {
	case HoldSignedOut:
		return "signed out"
	case HoldChallenge:
		return "held by a challenge"
	case HoldPaused:
		return "paused by an operator"
	}
	return "held by a usage limit until " + h.Until.Format(time.RFC3339)
}

// Encode renders the hold file.
func (h Hold) Encode() ([]byte, error) {
	h.Until, h.Since = h.Until.UTC().Truncate(time.Millisecond), h.Since.UTC().Truncate(time.Millisecond)
	return yaml.Marshal(h)
}

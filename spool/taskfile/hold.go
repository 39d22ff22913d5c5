package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// HeldExt ends the name of an account's hold file: <spool>/accounts/NAME.held.
const HeldExt = ".held"

// MaxHoldSize bounds a hold file; spoolgate writes a few hundred bytes.
const MaxHoldSize = 64 << 10

// The kinds of a hold (Hold.Kind). A usage limit's ends by itself at its
// until-time; a signed-out page's and a challenge's run until an operator
// signs in or releases the account (`spoolgate login`, `resume --account`).
const (
	HoldLimit     = ""          // a usage limit
	HoldSignedOut = "signedOut" // the page showed the site's signed-out link
	HoldChallenge = "challenge" // the page showed a challenge (captcha, slider, "Just a moment...")
	HoldPaused    = "paused"    // an operator paused the account (the console, `spoolgate pause --account`)
)

// Hold is a hold on an account (a usage limit, a signed-out page or a
// challenge: Kind): a fact about the account,
// kept in the spool (<spool>/accounts/NAME.held) so that every daemon and
// `status` on any machine that sees the spool reads the same thing. While
// a hold runs, the account's tasks wait in pending and spend no attempt.
// When it ends, the next task is tried; a site that still shows its limit
// holds the account again.
type Hold struct {
	Account string    `yaml:"-"`              // from the file name
	Kind    string    `yaml:"kind,omitempty"` // HoldLimit, HoldSignedOut or HoldChallenge
	Until   time.Time `yaml:"until"`          // the hold ends then; zero (signed out, challenge): when released
	Reason  string    `yaml:"reason"`         // the page's message
	Site    string    `yaml:"site,omitempty"` // the site that showed it
	// Wait is the reset the message asked for ("2m0s"), or "" when the
	// message named none and the site's limitHold applied.
	Wait  string    `yaml:"wait,omitempty"`
	Since time.Time `yaml:"since"`
	By    string    `yaml:"by,omitempty"`   // host:pid of the daemon that wrote it
	Task  string    `yaml:"task,omitempty"` // the task whose attempt met the limit
	// Screenshot is the page as the attempt saw it (a spool-relative
	// path, <lane>/logs/TASKID.N.png), for a signed-out page or a
	// challenge; "" when none could be saved.
	Screenshot string `yaml:"screenshot,omitempty"`

	// Err, when the file could not be read, says why; such a hold counts
	// as running until `spoolgate resume --account` ends it.
	Err string `yaml:"-"`
}

// DecodeHold parses a hold file.
func DecodeHold(data []byte) (Hold, error) {
	var h Hold
	if len(data) > MaxHoldSize {
		return h, fmt.Errorf("hold file is larger than %d bytes", MaxHoldSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&h); err != nil {
		return Hold{}, errors.New(OneLine(err.Error()))
	}
	switch h.Kind {
	case HoldLimit:
		if h.Until.IsZero() {
			return Hold{}, errors.New("until: missing")
		}
	case HoldSignedOut, HoldChallenge, HoldPaused:
	default:
		return Hold{}, fmt.Errorf("kind: %q is not a hold's kind (want signedOut, challenge or paused, or none)", h.Kind)
	}
	return h, nil
}

// ShotHref is the status page's link to a saved screenshot, given as its
// spool-relative path (LANE/logs/TASKID.N.png, as a hold's Screenshot):
// /task/LANE/TASKID/shot/N; "" for a path of another shape.
func ShotHref(rel string) string {
	parts := strings.Split(strings.ReplaceAll(rel, "\\", "/"), "/")
	if len(parts) != 3 || parts[1] != "logs" {
		return ""
	}
	name, ok := strings.CutSuffix(parts[2], ".png")
	i := strings.LastIndexByte(name, '.')
	if !ok || i <= 0 || !ValidTaskID(name[:i]) || name[i+1:] == "" || strings.Trim(name[i+1:], "0123456789") != "" {
		return ""
	}
	return "/task/" + url.PathEscape(parts[0]) + "/" + url.PathEscape(name[:i]) + "/shot/" + name[i+1:]
}

package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// HeldExt ends the name of an account's hold file: <spool>/accounts/NAME.held.
const HeldExt = ".held"

// MaxHoldSize bounds a hold file; spoolgate writes a few hundred bytes.
const MaxHoldSize = 64 << 10

// Hold is a usage limit's hold on an account: a fact about the account,
// kept in the spool (<spool>/accounts/NAME.held) so that every daemon and
// `status` on any machine that sees the spool reads the same thing. While
// a hold runs, the account's tasks wait in pending and spend no attempt.
// When it ends, the next task is tried; a site that still shows its limit
// holds the account again.
type Hold struct {
	Account string    `yaml:"-"`              // from the file name
	Until   time.Time `yaml:"until"`          // the hold ends then
	Reason  string    `yaml:"reason"`         // the page's message
	Site    string    `yaml:"site,omitempty"` // the site that showed it
	// Wait is the reset the message asked for ("2m0s"), or "" when the
	// message named none and the site's limitHold applied.
	Wait  string    `yaml:"wait,omitempty"`
	Since time.Time `yaml:"since"`
	By    string    `yaml:"by,omitempty"`   // host:pid of the daemon that wrote it
	Task  string    `yaml:"task,omitempty"` // the task whose attempt met the limit

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
	if h.Until.IsZero() {
		return Hold{}, errors.New("until: missing")
	}
	return h, nil
}

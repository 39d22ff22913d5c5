package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// PaceExt ends the name of an account's pace record: <spool>/accounts/NAME.pace.
const PaceExt = ".pace"

// MaxPaceSize bounds a pace record (a day's sends at most).
const MaxPaceSize = 256 << 10

// PaceRecord is an account's sends as its pace counts them (config.Pace):
// a fact about the account, kept in the spool so that a restarted daemon
// and every host of a shared spool pace it alike.
type PaceRecord struct {
	Account string      `yaml:"-"`
	Sends   []time.Time `yaml:"sends,omitempty"` // the sends that still count, oldest first
	// Next is when the last send's gap (and its jitter, drawn once) ends.
	Next time.Time `yaml:"next,omitempty"`
	// PacedUntil and PacedBy: the daemon that found the account's next
	// task paced wrote when it may start and which rule binds, for status.
	PacedUntil time.Time `yaml:"pacedUntil,omitempty"`
	PacedBy    string    `yaml:"pacedBy,omitempty"`
}

// Encode renders the record.
func (r PaceRecord) Encode() ([]byte, error) {
	out := r
	out.Sends = make([]time.Time, len(r.Sends))
	for i, t := range r.Sends {
		out.Sends[i] = t.UTC().Truncate(time.Millisecond)
	}
	out.Next, out.PacedUntil = r.Next.UTC().Truncate(time.Millisecond), r.PacedUntil.UTC().Truncate(time.Millisecond)
	return yaml.Marshal(out)
}

// DecodePace parses a pace record.
func DecodePace(data []byte) (PaceRecord, error) {
	var r PaceRecord
	if len(data) > MaxPaceSize {
		return r, fmt.Errorf("pace record is larger than %d bytes", MaxPaceSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		return PaceRecord{}, errors.New(OneLine(err.Error()))
	}
	return r, nil
}

package spool

import (
	"bytes"
	"time"
)

// scanPending reads the index fields of a pending task file that spoolgate
// itself wrote, without a YAML parser: top-level `key: value` lines in the
// encoder's own plain style. It reports false whenever it is not sure (a
// quoted or unusual value, a missing field, a state other than pending),
// and the caller then decodes the file in full. Start-up with 100,000
// pending files depends on this being fast.
func scanPending(data []byte) (t Task, ok bool) {
	// Line breaks other than \n (which the encoder never writes) would
	// make the decoder see lines this scanner does not.
	if bytes.IndexByte(data, '\r') >= 0 || bytes.Contains(data, []byte("\u0085")) ||
		bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029")) {
		return Task{}, false
	}
	var haveID, haveModel, haveState, haveSub bool
	indexLine := false // the previous line held an index field
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue // a blank line may sit inside a continued value
		}
		if (line[0] == ' ' || line[0] == '\t') && indexLine {
			return Task{}, false // a value continued on the next line: not ours
		}
		indexLine = false
		if line[0] == ' ' || line[0] == '#' || line[0] == '-' {
			continue // nested lines never hold index fields
		}
		colon := bytes.Index(line, []byte(": "))
		if colon < 0 {
			continue // e.g. "content: |-" has no ": " value after it... keep going
		}
		key, val := line[:colon], line[colon+2:]
		switch string(key) {
		case "taskId", "modelKind", "model", "batch", "state", "submittedAt", "notBefore":
		default:
			continue
		}
		if !plain(val) {
			return Task{}, false
		}
		indexLine = true
		v := string(val)
		switch string(key) {
		case "taskId":
			t.TaskID, haveID = v, true
		case "modelKind":
			t.ModelKind = Kind(v)
		case "model":
			t.Model, haveModel = v, true
		case "batch":
			t.Batch = v
		case "state":
			t.State, haveState = State(v), true
		case "submittedAt", "notBefore":
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return Task{}, false
			}
			if key[0] == 's' {
				t.SubmittedAt, haveSub = ts, true
			} else {
				t.NotBefore = ts
			}
		}
	}
	return t, haveID && haveModel && haveState && haveSub && t.State == StatePending
}

// plain reports whether v is a YAML plain scalar that means itself: no
// quotes, no flow or block indicators, no comment, no trailing space.
func plain(v []byte) bool {
	if len(v) == 0 || v[len(v)-1] == ' ' || v[len(v)-1] == '\r' || bytes.IndexByte(v, '\t') >= 0 {
		return false
	}
	switch v[0] {
	case ' ', '"', '\'', '|', '>', '[', '{', '&', '*', '!', '%', '@', '`', '?', ':', ',', '#', '-', '~':
		return false
	}
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return bytes.IndexByte(v, '#') < 0 && !bytes.Contains(v, []byte(": "))
}

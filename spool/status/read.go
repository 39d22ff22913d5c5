package status

import (
	"bytes"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/spoolgate/spoolgate/spool"
)

// summary is the part of a task file the status view needs.
type summary struct {
	id, model, batch, owner                                    string
	attempt                                                    int
	submittedAt, notBefore, startedAt, heartbeatAt, finishedAt time.Time
}

func summaryOf(t *spool.Task) summary {
	return summary{
		id: t.TaskID, model: t.Model, batch: t.Batch, owner: t.Owner, attempt: t.Attempt,
		submittedAt: t.SubmittedAt, notBefore: t.NotBefore, startedAt: t.StartedAt,
		heartbeatAt: t.HeartbeatAt, finishedAt: t.FinishedAt,
	}
}

// parseSummary reads the fields status needs from a task file. Task files
// in the state folders are written by spoolgate (Task.Encode), one
// top-level key per line, so a line scan finds them about ten times faster
// than a full YAML decode, which matters for spools of many thousands of
// files. Anything the scan does not understand (block or flow values,
// continuation lines, escapes) falls back to spool.DecodeTask.
func parseSummary(data []byte) (summary, bool) {
	if s, ok := scanSummary(data); ok {
		return s, true
	}
	t, err := spool.DecodeTask(data)
	if err != nil {
		return summary{}, false
	}
	return summaryOf(t), true
}

func scanSummary(data []byte) (summary, bool) {
	var s summary
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	want := false // the previous line was a wanted key: no continuation allowed
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if want {
				return s, false // a wanted value continues: let YAML decide
			}
			continue // inside content/prompt/result
		}
		want = false
		if line[0] == '#' || bytes.Equal(line, []byte("---")) {
			continue
		}
		i := bytes.Index(line, []byte(": "))
		var key, val []byte
		if i < 0 {
			if !bytes.HasSuffix(line, []byte{':'}) {
				return s, false
			}
			key = line[:len(line)-1]
		} else {
			key, val = line[:i], bytes.TrimSpace(line[i+2:])
		}
		var dst *string
		var tdst *time.Time
		switch string(key) {
		case "taskId":
			dst = &s.id
		case "model":
			dst = &s.model
		case "batch":
			dst = &s.batch
		case "owner":
			dst = &s.owner
		case "attempt":
			n, err := strconv.Atoi(string(val))
			if err != nil {
				return s, false
			}
			s.attempt = n
			want = true
			continue
		case "submittedAt":
			tdst = &s.submittedAt
		case "notBefore":
			tdst = &s.notBefore
		case "startedAt":
			tdst = &s.startedAt
		case "heartbeatAt":
			tdst = &s.heartbeatAt
		case "finishedAt":
			tdst = &s.finishedAt
		default:
			continue
		}
		want = true
		str, ok := scalar(val)
		if !ok {
			return s, false
		}
		if dst != nil {
			*dst = str
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			return s, false
		}
		*tdst = t
	}
	return s, true
}

// scalar returns a one-line YAML scalar's string value.
func scalar(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", false // a block or nested value follows
	}
	switch v[0] {
	case '"', '\'':
		var s string
		if err := yaml.Unmarshal(v, &s); err != nil {
			return "", false
		}
		return s, true
	case '|', '>', '[', '{', '&', '*', '!', '%', '@', '`':
		return "", false
	}
	if bytes.Contains(v, []byte(" #")) {
		return "", false
	}
	return string(v), true
}

package taskfile

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// Stale is the one staleness rule: a running task is stale when its last
// sign of life (heartbeatAt, else startedAt) is older than staleAfter. It
// also returns that age (zero when the task has no sign at all, which is
// not stale: an unmarked claim is judged by ClaimGrace instead).
func Stale(s Summary, now time.Time, staleAfter time.Duration) (age time.Duration, stale bool) {
	last := s.LastSign()
	if last.IsZero() {
		return 0, false
	}
	age = now.Sub(last)
	return age, age > staleAfter
}

// Summary is what the index and the status view need of a task file.
type Summary struct {
	TaskID, Model, Batch, Owner, Output, Account               string
	ResultMethod                                               string // how a web answer was read
	ResultCheck                                                string // how it compares with the page
	ResultFallback                                             string // the read methods that did not deliver before ResultMethod
	Usage                                                      Usage  // the answer's tokens as its API reported them, or estimated
	DoorToken                                                  string // the front door's token that submitted it (shown in totals, never acted on)
	Reasoning                                                  bool   // the file keeps a reasoning model's thinking
	ModelKind                                                  Kind
	Priority                                                   Priority
	State                                                      State
	Attempt                                                    int
	SubmittedAt, NotBefore, StartedAt, HeartbeatAt, FinishedAt time.Time
	// After is the tasks a chained task waits for until its content is
	// filled (none once it is), joined by commas (no taskId holds one:
	// a Summary stays comparable); the scan declines such a file.
	After string
	// FollowUp is the task whose chat a follow-up continues (followUp:).
	FollowUp string
	// Parents are all the tasks it waited or waits for (after: and
	// followUp:, comma-separated), filled or not: the timeline draws the
	// wait.
	Parents string
}

// SummaryOf is the Summary of a decoded task.
func SummaryOf(t *Task) Summary {
	return Summary{TaskID: t.TaskID, Model: t.Model, Batch: t.Batch, Owner: t.Owner, Output: t.Output, Account: t.Account, ModelKind: t.ModelKind, Priority: t.Priority,
		State: t.State, Attempt: t.Attempt, ResultMethod: t.ResultMethod, ResultCheck: t.ResultCheck, ResultFallback: t.ResultFallback, Usage: t.Usage, DoorToken: t.DoorToken, Reasoning: t.Reasoning != "", SubmittedAt: t.SubmittedAt, NotBefore: t.NotBefore,
		StartedAt: t.StartedAt, HeartbeatAt: t.HeartbeatAt, FinishedAt: t.FinishedAt, After: waitsFor(t), FollowUp: t.FollowUp, Parents: parentsOf(t)}
}

// waitsFor is the tasks t waits for: its after:, until its content is
// filled from them.
func waitsFor(t *Task) string {
	if t.Filled() {
		return ""
	}
	return parentsOf(t)
}

// parentsOf is t's after: and followUp:, comma-separated.
func parentsOf(t *Task) string {
	parents := t.After
	if t.FollowUp != "" {
		parents = append(parents[:len(parents):len(parents)], t.FollowUp)
	}
	return strings.Join(parents, ",")
}

// setUsageCount sets u's count (or mark) k to v as the encoder writes
// it; false for a key or value it does not write. Each key once: a
// second is not the encoder's.
func setUsageCount(u *Usage, k, v string) bool {
	if k == "estimated" {
		if v != "true" || u.Estimated {
			return false
		}
		u.Estimated = true
		return true
	}
	n, ok := plainCount(v)
	var c *int
	switch k {
	case "promptTokens":
		c = &u.PromptTokens
	case "completionTokens":
		c = &u.CompletionTokens
	case "reasoningTokens":
		c = &u.ReasoningTokens
	case "cachedTokens":
		c = &u.CachedTokens
	}
	if !ok || c == nil || *c != 0 || n == 0 {
		return false
	}
	*c = n
	return true
}

// isSummaryKey reports whether k is a top-level key ScanSummary reads a
// plain value of (a switch: faster than a map on this hot path).
func isSummaryKey(k string) bool {
	switch k {
	case "taskId", "modelKind", "model", "batch", "priority", "owner", "output", "account", "doorToken", "state", "attempt", "resultMethod", "resultCheck", "resultFallback",
		"submittedAt", "notBefore", "startedAt", "heartbeatAt", "finishedAt":
		return true
	}
	return false
}

// ScanSummary reads a Summary from a task file that spoolgate itself wrote,
// without a YAML parser: top-level `key: value` lines in the encoder's own
// plain style. It reports false whenever it is not sure (a quoted or
// unusual value, a continued line, a line break other than \n, no taskId or
// model), and the caller then decodes the file in full. Start-up with
// 100,000 pending files, and status over a large spool, depend on it being
// fast; FuzzScanSummary holds it to the decoder.
func ScanSummary(data []byte) (s Summary, ok bool) {
	if foreignBreaks(data) {
		return Summary{}, false
	}
	var haveID, haveModel bool
	indexLine := false // the previous line held a summary field
	inUsage := false   // the lines below "usage:" are its counts
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if len(line) == 0 {
			continue // a blank line may sit inside a continued value
		}
		if (line[0] == ' ' || line[0] == '\t') && indexLine {
			return Summary{}, false // a value continued on the next line: not ours
		}
		indexLine = false
		if inUsage && bytes.HasPrefix(line, []byte("  ")) {
			k, v, _ := bytes.Cut(line[2:], []byte(": "))
			if !setUsageCount(&s.Usage, string(k), string(v)) {
				return Summary{}, false
			}
			continue
		}
		inUsage = string(line) == "usage:"
		if inUsage {
			continue
		}
		if line[0] == ' ' || line[0] == '#' || line[0] == '-' {
			continue // nested lines never hold summary fields
		}
		if string(line) == "after:" || bytes.HasPrefix(line, []byte("followUp:")) {
			return Summary{}, false // a chain's parents, a list: decoded in full
		}
		if string(line) == "reasoning:" {
			return Summary{}, false // a value on the lines below: not the encoder's
		}
		colon := bytes.Index(line, []byte(": "))
		if colon < 0 {
			if k, ok := bytes.CutSuffix(line, []byte(":")); ok && isSummaryKey(string(k)) {
				return Summary{}, false // "state:" with its value on the next line: not the encoder's
			}
			continue // e.g. "attempts:" opens a block; its lines are nested
		}
		key, val := line[:colon], line[colon+2:]
		if string(key) == "reasoning" {
			// Only whether there is any: a block of the encoder's with a
			// line of text, or a plain value other than null.
			switch string(val) {
			case "|", "|-", "|+", ">", ">-", ">+":
				next, _ := cutLine(data)
				if len(next) < 2 || next[0] != ' ' || len(bytes.TrimLeft(next, " ")) == 0 {
					return Summary{}, false
				}
				s.Reasoning = true
				continue
			case "null", "Null", "NULL":
				return Summary{}, false
			}
			if !plain(val) {
				return Summary{}, false
			}
			s.Reasoning, indexLine = true, true
			continue
		}
		if !isSummaryKey(string(key)) {
			continue
		}
		if !plain(val) {
			return Summary{}, false
		}
		indexLine = true
		v := string(val)
		switch string(key) {
		case "taskId":
			s.TaskID, haveID = v, true
		case "modelKind":
			s.ModelKind = Kind(v)
		case "model":
			s.Model, haveModel = v, true
		case "batch":
			s.Batch = v
		case "priority":
			s.Priority = Priority(v)
		case "owner":
			s.Owner = v
		case "output":
			s.Output = v
		case "account":
			s.Account = v
		case "doorToken":
			s.DoorToken = v
		case "resultMethod":
			s.ResultMethod = v
		case "resultCheck":
			s.ResultCheck = v
		case "resultFallback":
			s.ResultFallback = v
		case "state":
			s.State = State(v)
		case "attempt":
			n, isCount := plainCount(v)
			if !isCount {
				return Summary{}, false
			}
			s.Attempt = n
		default:
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return Summary{}, false
			}
			switch key[0] {
			case 's':
				if key[1] == 'u' {
					s.SubmittedAt = ts
				} else {
					s.StartedAt = ts
				}
			case 'n':
				s.NotBefore = ts
			case 'h':
				s.HeartbeatAt = ts
			case 'f':
				s.FinishedAt = ts
			}
		}
	}
	return s, haveID && haveModel
}

// foreignBreaks reports whether data holds a line break other than \n
// (which the encoder never writes): the decoder would see lines that a
// scanner splitting at \n does not.
func foreignBreaks(data []byte) bool {
	return bytes.IndexByte(data, '\r') >= 0 || bytes.Contains(data, []byte("\u0085")) ||
		bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))
}

// cutLine splits data at its first \n: the line before it and the rest.
func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// plainCount reads a plain scalar the decoder reads as the same
// non-negative int: YAML reads 0x10, 010, 1_0 and +1 otherwise.
func plainCount(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || len(v) > 1 && v[0] == '0' || v[0] == '+' {
		return 0, false
	}
	return n, true
}

// plain reports whether v is a YAML plain scalar that means itself: no
// quotes, no flow or block indicators, no comment, no trailing space.
func plain(v []byte) bool {
	if len(v) == 0 || v[len(v)-1] == ' ' || bytes.IndexByte(v, '\t') >= 0 {
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

// LastSign is when a running task last showed life: its heartbeat, else
// its start.
func (s Summary) LastSign() time.Time {
	if s.HeartbeatAt.IsZero() {
		return s.StartedAt
	}
	return s.HeartbeatAt
}

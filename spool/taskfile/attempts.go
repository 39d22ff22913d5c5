package taskfile

import (
	"bytes"
	"time"
)

// AttemptRecord is one attempt as the task file keeps it (`attempts:`):
// written by the lane when it marks the claim running and completed when
// the attempt ends, so the file itself says which slot or session ran
// what, and when, and any host reading the share draws the same timeline.
type AttemptRecord struct {
	N         int       `yaml:"attempt"`             // its number: the task's `attempt` while it ran
	ClaimedAt time.Time `yaml:"claimedAt"`           // the claim's move into running/
	StartedAt time.Time `yaml:"startedAt,omitempty"` // marked running: the work starts
	EndedAt   time.Time `yaml:"endedAt,omitempty"`   // zero while it runs
	// Outcome is how it ended: success, retried, failed, canceled, held
	// (a usage limit held the account; not spent), returned (handed back
	// unspent: shutdown), "" while it runs.
	Outcome    string     `yaml:"outcome,omitempty"`
	ErrorClass ErrorClass `yaml:"errorClass,omitempty"`
	Owner      string     `yaml:"owner,omitempty"`     // host:pid that ran it
	Account    string     `yaml:"account,omitempty"`   // web: the session's account
	Method     string     `yaml:"method,omitempty"`    // how the answer was read, when the executor says
	HeldUntil  time.Time  `yaml:"heldUntil,omitempty"` // held: the account's hold ends then

	// Web: how the attempt delivered the prompt (sendrecord.go), the
	// conversation it sent to or collected from, and why it sent again.
	Delivery           DeliveryHow `yaml:"delivery,omitempty"`
	Conversation       string      `yaml:"conversation,omitempty"`
	DeliveryReason     string      `yaml:"deliveryReason,omitempty"`
	PossibleDoubleSend bool        `yaml:"possibleDoubleSend,omitempty"`
	// Modes (web) are the page modes the attempt's send ran in, as read
	// back from the page before it: "deepThink on, search off".
	Modes string `yaml:"modes,omitempty"`
	// Attached (web) names the files the attempt put on the page, in
	// order ("ref.jpg, 说明.txt"), once the page showed them all.
	Attached string `yaml:"attached,omitempty"`
	// Usage is this attempt's tokens (a schema mismatch's answer was paid
	// for too); the task's usage is its successful attempt's.
	Usage Usage `yaml:"usage,omitempty"`
}

// The outcomes an AttemptRecord names.
const (
	AttemptSuccess  = "success"
	AttemptRetried  = "retried"
	AttemptFailed   = "failed"
	AttemptCanceled = "canceled"
	AttemptHeld     = "held"
	AttemptReturned = "returned"
)

// MaxAttemptRecords bounds the history a task file keeps: a task handed
// back at many shutdowns must not grow without end. The oldest go first.
// Readers draw no more of a file than this either: a file that holds more
// was not written by a daemon.
const MaxAttemptRecords = 32

// OpenAttempt appends the record of attempt n, claimed at claimed and
// marked running at now. A record still open from an attempt that never
// recorded its end (a crash) is closed first at its last sign of life.
func (t *Task) OpenAttempt(claimed, now time.Time, owner, account string) {
	if last := t.lastOpenAttempt(); last != nil {
		end := t.HeartbeatAt
		if end.Before(last.StartedAt) {
			end = last.StartedAt
		}
		last.EndedAt, last.Outcome = end, AttemptReturned
	}
	if claimed.IsZero() || claimed.After(now) {
		claimed = now
	}
	t.Attempts = append(t.Attempts, AttemptRecord{N: t.Attempt, ClaimedAt: claimed, StartedAt: now, Owner: owner, Account: account})
	if n := len(t.Attempts); n > MaxAttemptRecords {
		t.Attempts = append([]AttemptRecord(nil), t.Attempts[n-MaxAttemptRecords:]...)
	}
}

// CloseAttempt records the end of the running attempt, if it has an open
// record.
func (t *Task) CloseAttempt(end time.Time, outcome string, class ErrorClass, heldUntil time.Time) {
	last := t.lastOpenAttempt()
	if last == nil {
		return
	}
	if end.Before(last.ClaimedAt) {
		end = last.ClaimedAt
	}
	last.EndedAt, last.Outcome, last.ErrorClass, last.HeldUntil = end, outcome, class, heldUntil
}

func (t *Task) lastOpenAttempt() *AttemptRecord {
	if n := len(t.Attempts); n > 0 && t.Attempts[n-1].EndedAt.IsZero() {
		t.Attempts = append([]AttemptRecord(nil), t.Attempts...) // never write into a clone's shared array
		return &t.Attempts[len(t.Attempts)-1]
	}
	return nil
}

// roundAttempts rounds the records' times as Encode rounds the task's.
func roundAttempts(as []AttemptRecord) []AttemptRecord {
	if len(as) == 0 {
		return as
	}
	out := make([]AttemptRecord, len(as))
	for i, a := range as {
		for _, p := range []*time.Time{&a.ClaimedAt, &a.StartedAt, &a.EndedAt, &a.HeldUntil} {
			if !p.IsZero() {
				*p = p.UTC().Truncate(time.Millisecond)
			}
		}
		out[i] = a
	}
	return out
}

// ScanAttempts reads the `attempts:` list of a task file that spoolgate
// itself wrote, without a YAML parser (the status page reads it from
// every task file in the span it draws, like ScanSummary). ok is false
// whenever it is not sure, and the caller then decodes the file in full;
// a file without the list gives nil, true. FuzzScanAttempts holds it to
// the decoder.
func ScanAttempts(data []byte) (as []AttemptRecord, ok bool) {
	as, _, ok = ScanAttemptsLast(data, 0)
	return as, ok
}

// countItems counts the items of the attempts list that starts data: its
// lines that open one, up to the next top-level key.
func countItems(data []byte) int {
	n := 0
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if bytes.HasPrefix(line, []byte("  - ")) {
			n++
		} else if len(line) > 0 && line[0] != ' ' && line[0] != '-' && line[0] != '#' {
			break
		}
	}
	return n
}

// attemptKey reports whether k is a key of an attempt's record (without
// allocating: a switch on string(k) does not).
func attemptKey(k []byte) bool {
	switch string(k) {
	case "attempt", "claimedAt", "startedAt", "endedAt", "heldUntil", "outcome", "errorClass", "owner", "account", "method",
		"delivery", "conversation", "deliveryReason", "possibleDoubleSend", "modes", "attached":
		return true
	}
	return false
}

// ScanAttemptsLast is ScanAttempts keeping only the last n records (n > 0;
// 0 keeps all), in memory bounded by n whatever the file holds; total is
// how many the list has.
func ScanAttemptsLast(data []byte, n int) (as []AttemptRecord, total int, ok bool) {
	as, ok = scanAttempts(data, n, &total)
	if n > 0 && len(as) > n {
		as = as[len(as)-n:]
	}
	return as, total, ok
}

func scanAttempts(data []byte, n int, total *int) (as []AttemptRecord, ok bool) {
	if foreignBreaks(data) || indentedTop(data) {
		return nil, false
	}
	i := bytes.Index(data, []byte("\nattempts:\n"))
	if i < 0 {
		if bytes.HasPrefix(data, []byte("attempts:")) || bytes.Contains(data, []byte("\nattempts:")) {
			return nil, false // a form the encoder does not write
		}
		return nil, true
	}
	if bytes.Contains(data[i+1:], []byte("\nattempts:")) {
		return nil, false // twice: the decoder refuses it
	}
	if !linesClosed(data[:i+1]) {
		return nil, false // "attempts:" may sit inside a value spanning lines
	}
	data = data[i+len("\nattempts:\n"):]
	keepFrom := 0 // the first record kept: only the last n are parsed
	if n > 0 {
		keepFrom = countItems(data) - n
	}
	var cur *AttemptRecord
	skip := false
	var usage *Usage // a record's "usage:" opened: its counts follow, two deeper
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if usage != nil && bytes.HasPrefix(line, []byte("      ")) {
			k, v, _ := bytes.Cut(line[6:], []byte(": "))
			if !setUsageCount(usage, string(k), string(v)) {
				return nil, false
			}
			continue
		}
		usage = nil
		if string(line) == "    usage:" && *total > 0 {
			if usage = new(Usage); !skip {
				if !cur.Usage.IsZero() {
					return nil, false // twice in a record: the decoder refuses it
				}
				usage = &cur.Usage
			}
			continue
		}
		var kv []byte
		switch {
		case bytes.HasPrefix(line, []byte("  - ")):
			*total++
			if skip = *total <= keepFrom; !skip {
				as = append(as, AttemptRecord{})
				cur = &as[len(as)-1]
			}
			kv = line[4:]
		case bytes.HasPrefix(line, []byte("    ")) && *total > 0:
			kv = line[4:]
		case len(line) > 0 && line[0] != ' ' && line[0] != '-' && line[0] != '#':
			return as, len(as) > 0 // the next top-level key
		default:
			return nil, false
		}
		colon := bytes.Index(kv, []byte(": "))
		if colon <= 0 || !plain(kv[colon+2:]) {
			return nil, false
		}
		if skip {
			// A record before the last n: its form is checked, its
			// values are not kept (nor allocated).
			if v := kv[colon+2:]; string(v) == "null" || string(v) == "Null" || string(v) == "NULL" || !attemptKey(kv[:colon]) {
				return nil, false
			}
			continue
		}
		key, v := string(kv[:colon]), string(kv[colon+2:])
		if v == "null" || v == "Null" || v == "NULL" {
			return nil, false // the decoder reads it as nothing
		}
		switch key {
		case "attempt":
			n, isCount := plainCount(v)
			if !isCount {
				return nil, false
			}
			cur.N = n
		case "claimedAt", "startedAt", "endedAt", "heldUntil":
			ts, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, false
			}
			switch key {
			case "claimedAt":
				cur.ClaimedAt = ts
			case "startedAt":
				cur.StartedAt = ts
			case "endedAt":
				cur.EndedAt = ts
			default:
				cur.HeldUntil = ts
			}
		case "outcome":
			cur.Outcome = v
		case "errorClass":
			cur.ErrorClass = ErrorClass(v)
		case "owner":
			cur.Owner = v
		case "account":
			cur.Account = v
		case "method":
			cur.Method = v
		case "delivery":
			cur.Delivery = DeliveryHow(v)
		case "conversation":
			cur.Conversation = v
		case "deliveryReason":
			cur.DeliveryReason = v
		case "modes":
			cur.Modes = v
		case "attached":
			cur.Attached = v
		case "possibleDoubleSend":
			if v != "true" && v != "false" {
				return nil, false // the decoder's other spellings
			}
			cur.PossibleDoubleSend = v == "true"
		default:
			return nil, false // a field the decoder refuses
		}
	}
	return as, len(as) > 0
}

// indentedTop reports whether data's first key is indented: the encoder
// writes its keys at the margin, but YAML reads an indented mapping as
// the top level (" attempts:" is the list), which a scan for
// "\nattempts:" would miss (a fuzz find).
func indentedTop(data []byte) bool {
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		switch {
		case len(bytes.TrimSpace(line)) == 0, line[0] == '#', bytes.HasPrefix(line, []byte("---")):
			continue
		}
		return line[0] == ' ' || line[0] == '\t'
	}
	return false
}

// linesClosed reports whether every line of head (the file above a
// top-level key) ends every value it opens: a key of plain characters
// with a plain or one-line quoted value, or a block scalar's indicator
// whose more indented lines are skipped. A quoted or flow value left open
// could run on over the next line, which is then not a key at all: the
// scanner declines such a file and its caller decodes it in full.
func linesClosed(head []byte) bool {
	block := -1 // indentation of an open block scalar's key, or -1
	for len(head) > 0 {
		var line []byte
		line, head = cutLine(head)
		trimmed := bytes.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if len(trimmed) == 0 {
			continue
		}
		if block >= 0 && indent > block {
			continue // a line of the block scalar's text
		}
		block = -1
		if trimmed[0] == '#' {
			continue
		}
		for bytes.HasPrefix(trimmed, []byte("- ")) {
			trimmed, indent = trimmed[2:], indent+2
		}
		key, v, hasValue := bytes.Cut(trimmed, []byte(": "))
		if !hasValue {
			key = bytes.TrimSuffix(trimmed, []byte(":"))
			if len(key) == len(trimmed) {
				return false // not a key: a continued value, or a form the encoder does not write
			}
		}
		for _, c := range key {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
				return false
			}
		}
		switch {
		case len(key) == 0:
			return false
		case !hasValue:
		case blockIndicator(v):
			block = indent
		case !closedValue(v):
			return false
		}
	}
	return true
}

// blockIndicator reports whether v opens a block scalar (|, |-, >+, |2...).
func blockIndicator(v []byte) bool {
	if len(v) == 0 || v[0] != '|' && v[0] != '>' {
		return false
	}
	for _, c := range v[1:] {
		if c != '-' && c != '+' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// closedValue reports whether the value v ends on its own line: a quoted
// scalar whose closing quote is its last character, or a plain one; a
// flow collection, an anchor, an alias or a tag is not judged here.
func closedValue(v []byte) bool {
	if len(v) == 0 {
		return false // "key: " with nothing: a form the encoder does not write
	}
	switch v[0] {
	case '\'':
		// '' is a quote inside; a closed scalar has an even count in all.
		return len(v) >= 2 && v[len(v)-1] == '\'' && bytes.Count(v, []byte("'"))%2 == 0
	case '"':
		if len(v) < 2 || v[len(v)-1] != '"' {
			return false
		}
		esc := 0
		for j := len(v) - 2; j > 0 && v[j] == '\\'; j-- {
			esc++
		}
		return esc%2 == 0
	case '{', '[', '&', '*', '!', '%', '@', '`', '?', '|', '>':
		return false
	}
	return true
}

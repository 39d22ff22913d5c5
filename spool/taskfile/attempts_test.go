package taskfile

import (
	"reflect"
	"testing"
	"time"
)

// The scan reads what the encoder writes, exactly as the decoder does.
func TestScanAttempts_Encoded(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 123e6, time.UTC)
	tk := &Task{TaskID: "a", Model: "m", Content: "x\ny", State: StateSuccess, Attempt: 2, Result: "## done\n- a\n",
		Attempts: []AttemptRecord{
			{N: 1, ClaimedAt: t0, StartedAt: t0.Add(time.Millisecond), EndedAt: t0.Add(time.Minute), Outcome: AttemptRetried, ErrorClass: ClassSchema, Owner: "host-1:42", Account: "alice",
				Usage: Usage{PromptTokens: 40, CompletionTokens: 12, ReasoningTokens: 3, Estimated: true}},
			{N: 2, ClaimedAt: t0.Add(2 * time.Minute), StartedAt: t0.Add(2 * time.Minute), EndedAt: t0.Add(3 * time.Minute), Outcome: AttemptHeld, HeldUntil: t0.Add(time.Hour), Method: "dom"},
			{N: 2, ClaimedAt: t0.Add(4 * time.Minute), StartedAt: t0.Add(4 * time.Minute)},
		}}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := ScanAttempts(data)
	if !ok {
		t.Fatalf("scan declined:\n%s", data)
	}
	full, err := DecodeTask(data)
	if err != nil {
		t.Fatal(err)
	}
	if !sameAttempts(got, full.Attempts) || !sameAttempts(got, tk.Attempts) {
		t.Fatalf("scan %+v\ndecode %+v", got, full.Attempts)
	}
	if s, ok := ScanSummary(data); !ok || s.TaskID != "a" || s.Attempt != 2 {
		t.Fatalf("the summary scan no longer reads a file with attempts: %+v %v", s, ok)
	}
	if as, ok := ScanAttempts([]byte("taskId: a\nmodel: m\n")); !ok || as != nil {
		t.Fatalf("no list: %v %v", as, ok)
	}
}

func FuzzScanAttempts(f *testing.F) {
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 1\n    claimedAt: 2026-01-01T00:00:00Z\n    outcome: success\nresult: x\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 1\n    owner: 'h:1'\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n- n: 1\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 01\n    account: null\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 2\n    heldUntil: 2026-01-01T01:00:00.5+08:00\n    errorClass: transient\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 1\n    usage:\n      promptTokens: 3\n      estimated: true\n  - attempt: 2\n    usage:\n      cachedTokens: 1\n    outcome: success\nresult: x\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 1\n    usage:\n      promptTokens: 3\n    usage:\n      promptTokens: 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := ScanAttempts(data)
		if !ok {
			return
		}
		full, err := DecodeTask(data)
		if err != nil {
			return // not a file spoolgate wrote: the callers decode in full only when the scan declines
		}
		if !sameAttempts(got, full.Attempts) {
			t.Fatalf("scan %+v != decode %+v", got, full.Attempts)
		}
	})
}

// sameAttempts compares times as instants.
func sameAttempts(a, b []AttemptRecord) bool {
	if len(a) != len(b) {
		return false
	}
	norm := func(r AttemptRecord) AttemptRecord {
		for _, p := range []*time.Time{&r.ClaimedAt, &r.StartedAt, &r.EndedAt, &r.HeldUntil} {
			if !p.IsZero() {
				*p = p.UTC()
			}
		}
		return r
	}
	for i := range a {
		if !reflect.DeepEqual(norm(a[i]), norm(b[i])) {
			return false
		}
	}
	return true
}

// TestScanAttemptsLast: the last n records, as ScanAttempts reads them,
// and the count of the whole list; a file with fewer gives them all.
func TestScanAttemptsLast(t *testing.T) {
	tk := &Task{TaskID: "t", Model: "m", Content: "x"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100 {
		tk.Attempts = append(tk.Attempts, AttemptRecord{N: i + 1, ClaimedAt: t0.Add(time.Duration(i) * time.Second), Outcome: AttemptRetried, Owner: "h:1"})
	}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	all, ok := ScanAttempts(data)
	if !ok || len(all) != 100 {
		t.Fatalf("ScanAttempts: %d records, ok %v", len(all), ok)
	}
	for _, n := range []int{1, 32, 100, 500} {
		last, total, ok := ScanAttemptsLast(data, n)
		want := all[max(len(all)-n, 0):]
		if !ok || total != 100 || !reflect.DeepEqual(last, want) {
			t.Errorf("n=%d: %d records from %d, total %d, ok %v; want the last %d of 100", n, len(last), last[0].N, total, ok, len(want))
		}
	}
}

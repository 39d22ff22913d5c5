package spool

import (
	"testing"
	"time"
)

// The scanner agrees with the full decoder on every file spoolgate writes,
// and declines (rather than guesses) on anything unusual.
func TestScanPending(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 1, 2, 345e6, time.UTC)
	for _, tk := range []Task{
		{TaskID: "a", ModelKind: KindAPI, Model: "fast", Content: "x", State: StatePending, SubmittedAt: now},
		{TaskID: "b.c-d", ModelKind: KindWeb, Model: "chat web", Batch: "spring launch", Content: "line\nline: two", State: StatePending, SubmittedAt: now, NotBefore: now.Add(time.Minute), Error: "x: y"},
		{TaskID: "q", ModelKind: KindAPI, Model: "'quoted'", Batch: "#tag", Content: "x", State: StatePending, SubmittedAt: now},
		{TaskID: "r", ModelKind: KindAPI, Model: "m", Batch: "a: b", Content: "model: other\nstate: failed", State: StatePending, SubmittedAt: now},
		{TaskID: "s", ModelKind: KindAPI, Model: "m", Content: "x", State: StateRunning, SubmittedAt: now},
		{TaskID: "春季广告", ModelKind: KindAPI, Model: "m", Batch: "🌷 spring", Output: "春/a.txt", Content: "🌷", State: StatePending, SubmittedAt: now},
		{TaskID: "café-01", ModelKind: KindWeb, Model: "m", Output: "a b/c.txt", Content: "x", State: StatePending, SubmittedAt: now},
		{TaskID: "p", ModelKind: KindAPI, Model: "m", Priority: PriorityHigh, Content: "x", State: StatePending, SubmittedAt: now},
	} {
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := scanPending(data)
		full, err := DecodeTask(data)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if tk.TaskID == "春季广告" {
				t.Errorf("the scanner declines a plain Unicode task:\n%s", data)
			}
			continue // declined: the caller decodes in full
		}
		if got.TaskID != full.TaskID || got.Model != full.Model || got.Batch != full.Batch || got.ModelKind != full.ModelKind || got.Output != full.Output || got.Priority != full.Priority ||
			!got.SubmittedAt.Equal(full.SubmittedAt) || !got.NotBefore.Equal(full.NotBefore) || full.State != StatePending {
			t.Errorf("scan disagrees with decode for %q:\nscan %+v\nfull %+v", tk.TaskID, got, full)
		}
	}
}

func FuzzScanSummary(f *testing.F) {
	f.Add([]byte("taskId: a\nmodelKind: api\nmodel: m\ncontent: x\nstate: pending\nattempt: 0\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: a\nmodel: 'm'\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: r\nmodel: m\ncontent: |-\n  x\n  y\nstate: running\nattempt: 2\nowner: h:1\nstartedAt: 2026-01-01T00:00:00.5Z\nheartbeatAt: 2026-01-01T00:00:01Z\nfinishedAt: 2026-01-01T00:00:02Z\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempt: 010\n"))
	f.Add([]byte("taskId: 春季广告\nmodel: m\nbatch: 🌷 spring\noutput: 春/a.txt\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: か\u3099\nmodel: m\noutput: \"a b\"\n"))
	f.Add([]byte("taskId: a\nmodel: m\npriority: high\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: a\nmodel: m\nstate: success\nowner: h:1\naccount: a1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := ScanSummary(data)
		if !ok {
			return
		}
		full, err := DecodeTask(data)
		if err != nil {
			return // not a file spoolgate wrote: the callers decode in full only when the scan declines
		}
		if want := SummaryOf(full); !sameSummary(got, want) {
			t.Fatalf("scan %+v != decode %+v", got, want)
		}
	})
}

// sameSummary compares times as instants: two parses of one offset give
// equal instants in distinct *time.Location values.
func sameSummary(a, b Summary) bool {
	at := []time.Time{a.SubmittedAt, a.NotBefore, a.StartedAt, a.HeartbeatAt, a.FinishedAt}
	bt := []time.Time{b.SubmittedAt, b.NotBefore, b.StartedAt, b.HeartbeatAt, b.FinishedAt}
	for i := range at {
		if !at[i].Equal(bt[i]) {
			return false
		}
	}
	a.SubmittedAt, a.NotBefore, a.StartedAt, a.HeartbeatAt, a.FinishedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	b.SubmittedAt, b.NotBefore, b.StartedAt, b.HeartbeatAt, b.FinishedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

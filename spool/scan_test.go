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
			continue // declined: the caller decodes in full
		}
		if got.TaskID != full.TaskID || got.Model != full.Model || got.Batch != full.Batch || got.ModelKind != full.ModelKind ||
			!got.SubmittedAt.Equal(full.SubmittedAt) || !got.NotBefore.Equal(full.NotBefore) || full.State != StatePending {
			t.Errorf("scan disagrees with decode for %q:\nscan %+v\nfull %+v", tk.TaskID, got, full)
		}
	}
}

func FuzzScanPending(f *testing.F) {
	f.Add([]byte("taskId: a\nmodelKind: api\nmodel: m\ncontent: x\nstate: pending\nattempt: 0\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: a\nmodel: 'm'\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := scanPending(data)
		if !ok {
			return
		}
		full, err := DecodeTask(data)
		if err != nil {
			return // not a file spoolgate wrote; LoadPending re-reads such files in full only when the scan declines
		}
		if got.TaskID != full.TaskID || got.Model != full.Model || got.Batch != full.Batch {
			t.Fatalf("scan %+v != decode %+v", got, full)
		}
	})
}

package spool

import (
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The scanner agrees with the full decoder on every file spoolgate writes,
// and declines (rather than guesses) on anything unusual.
func TestScanPending(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 1, 2, 345e6, time.UTC)
	for _, tk := range []taskfile.Task{
		{TaskID: "a", ModelKind: taskfile.KindAPI, Model: "fast", Content: "x", State: taskfile.StatePending, SubmittedAt: now},
		{TaskID: "b.c-d", ModelKind: taskfile.KindWeb, Model: "chat web", Batch: "spring launch", Content: "line\nline: two", State: taskfile.StatePending, SubmittedAt: now, NotBefore: now.Add(time.Minute), Error: "x: y"},
		{TaskID: "q", ModelKind: taskfile.KindAPI, Model: "'quoted'", Batch: "#tag", Content: "x", State: taskfile.StatePending, SubmittedAt: now},
		{TaskID: "r", ModelKind: taskfile.KindAPI, Model: "m", Batch: "a: b", Content: "model: other\nstate: failed", State: taskfile.StatePending, SubmittedAt: now},
		{TaskID: "s", ModelKind: taskfile.KindAPI, Model: "m", Content: "x", State: taskfile.StateRunning, SubmittedAt: now},
		{TaskID: "春季广告", ModelKind: taskfile.KindAPI, Model: "m", Batch: "🌷 spring", Output: "春/a.txt", Content: "🌷", State: taskfile.StatePending, SubmittedAt: now},
		{TaskID: "café-01", ModelKind: taskfile.KindWeb, Model: "m", Output: "a b/c.txt", Content: "x", State: taskfile.StatePending, SubmittedAt: now},
		{TaskID: "p", ModelKind: taskfile.KindAPI, Model: "m", Priority: taskfile.PriorityHigh, Content: "x", State: taskfile.StatePending, SubmittedAt: now},
	} {
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := scanPending(data)
		full, err := taskfile.DecodeTask(data)
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
			!got.SubmittedAt.Equal(full.SubmittedAt) || !got.NotBefore.Equal(full.NotBefore) || full.State != taskfile.StatePending {
			t.Errorf("scan disagrees with decode for %q:\nscan %+v\nfull %+v", tk.TaskID, got, full)
		}
	}
}

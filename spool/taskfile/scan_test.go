package taskfile

import (
	"testing"
	"time"
)

func FuzzScanSummary(f *testing.F) {
	f.Add([]byte("taskId: a\nmodelKind: api\nmodel: m\ncontent: x\nstate: pending\nattempt: 0\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: a\nmodel: 'm'\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: r\nmodel: m\ncontent: |-\n  x\n  y\nstate: running\nattempt: 2\nowner: h:1\nstartedAt: 2026-01-01T00:00:00.5Z\nheartbeatAt: 2026-01-01T00:00:01Z\nfinishedAt: 2026-01-01T00:00:02Z\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempt: 010\n"))
	f.Add([]byte("taskId: 春季广告\nmodel: m\nbatch: 🌷 spring\noutput: 春/a.txt\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: か\u3099\nmodel: m\noutput: \"a b\"\n"))
	f.Add([]byte("taskId: a\nmodel: m\npriority: high\nstate: pending\nsubmittedAt: 2026-01-01T00:00:00Z\n"))
	f.Add([]byte("taskId: a\nmodel: m\nstate: success\nowner: h:1\naccount: a1\n"))
	f.Add([]byte("taskId: a\nmodel: m\nstate: success\nresult: x\nreasoning: |-\n  why\n  because\n"))
	f.Add([]byte("taskId: a\nmodel: m\nreasoning: plain thinking\n"))
	f.Add([]byte("taskId: a\nmodel: m\nreasoning: |-\nstate: success\n"))
	f.Add([]byte("taskId: a\nmodel: m\nstate: success\nusage:\n  promptTokens: 12\n  completionTokens: 30\nresult: x\n"))
	f.Add([]byte("taskId: a\nmodel: m\nusage:\n  promptTokens: 012\n"))
	f.Add([]byte("taskId: a\nmodel: m\nusage:\n  other: 1\n"))
	f.Add([]byte("taskId: a\nmodel: m\nattempts:\n  - attempt: 1\n    usage:\n      promptTokens: 3\nusage:\n  promptTokens: 12\n  completionTokens: 30\n  reasoningTokens: 9\n  cachedTokens: 4\n  estimated: true\nresult: x\n"))
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

// BenchmarkScanSummary: the line scan status and start-up run over every
// file of a spool, on a done file as a daemon writes it.
func BenchmarkScanSummary(b *testing.B) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	tk := &Task{TaskID: "t-1", Model: "writer", Batch: "b", Content: "some content", State: StateSuccess, Attempt: 2, Owner: "h:1", DoorToken: "e2e",
		SubmittedAt: at, StartedAt: at, HeartbeatAt: at, FinishedAt: at, Result: "Answer: x", Usage: Usage{PromptTokens: 12, CompletionTokens: 30},
		Attempts: []AttemptRecord{{N: 1, ClaimedAt: at, Outcome: AttemptRetried}, {N: 2, ClaimedAt: at, Outcome: AttemptSuccess}}}
	data, err := tk.Encode()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := ScanSummary(data); !ok {
			b.Fatal("not scanned")
		}
	}
}

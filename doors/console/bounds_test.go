package console

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestHTTPServer_PlantedAttempts: a done/ file planted with 80,000
// `attempts:` records, all at once (a daemon keeps 32), costs the status
// page what any task costs: the timeline draws the last 32 and says how
// many it left out, in under 20 MB of allocations (was 52 MB, every
// 80,000 bars packed; 74 ms against 9.5 s, logged, not asserted: a
// wall-clock bound would fail on a loaded machine, and the allocations
// are the work done).
func TestHTTPServer_PlantedAttempts(t *testing.T) {
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	now := time.Now().UTC()
	tk := taskfile.Task{TaskID: "many", ModelKind: taskfile.KindAPI, Model: "writer", Content: "x", State: taskfile.StateSuccess, Attempt: 80000,
		SubmittedAt: now.Add(-time.Hour), StartedAt: now.Add(-20 * time.Minute), FinishedAt: now.Add(-10 * time.Minute)}
	for i := range 80000 {
		tk.Attempts = append(tk.Attempts, taskfile.AttemptRecord{N: i + 1, ClaimedAt: now.Add(-20 * time.Minute), StartedAt: now.Add(-20 * time.Minute),
			EndedAt: now.Add(-10 * time.Minute), Outcome: taskfile.AttemptRetried, Owner: "evil:1"})
	}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, taskfile.DirDone), "many.yaml"), data, spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	tk.Attempts = nil
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, body := get(t, h, "/")
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("status page over 80,000 planted attempts (a %d MB file): %s, %.1f MB allocated", len(data)>>20, took.Round(time.Millisecond), float64(alloc)/(1<<20))
	if alloc > 20<<20 {
		t.Errorf("status page took %s and %.1f MB; want under 20 MB", took, float64(alloc)/(1<<20))
	}
	if n := bytes.Count(body, []byte(`data-task="many"`)); n != taskfile.MaxAttemptRecords {
		t.Errorf("the timeline draws %d of the planted attempts, want the last %d", n, taskfile.MaxAttemptRecords)
	}
	if !strings.Contains(string(body), "79968 attempts not drawn") {
		t.Errorf("the timeline does not say how many it left out")
	}
}

// TestHTTPServer_TaskPageBounds: 60 sparse 31 MiB files named like one
// task's screenshots (84 KB on disk) cost the task page and their
// addresses no memory to speak of: the page lists the last attempts'
// only, a "screenshot" larger than the browser writes is a 404, and one
// of a screenshot's size is streamed, never held whole. A done task with
// a 2 MB answer is read as `results` reads it.
func TestHTTPServer_TaskPageBounds(t *testing.T) {
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	logs := L.Lane(taskfile.KindAPI, taskfile.DirLogs)
	sparse := func(name string, size int64) {
		f, err := os.Create(filepath.Join(logs, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for n := 1; n <= 60; n++ {
		sparse(fmt.Sprintf("a3.%d.png", n), 31<<20)
	}
	sparse("a3.61.png", maxShot-1) // the last attempt's, as large as a real one may be
	big := taskfile.Task{TaskID: "big", ModelKind: taskfile.KindAPI, Model: "writer", Content: "x", State: taskfile.StateSuccess, Result: strings.Repeat("a long answer. ", 140000)}
	data, _ := big.Encode()
	if err := os.WriteFile(L.TaskPath(taskfile.KindAPI, taskfile.DirDone, "big"), data, spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, body := get(t, h, "/task/api/a3")
	if n := strings.Count(string(body), `src="/task/api/a3/shot/`); n != maxShotAttempts {
		t.Errorf("the page lists %d screenshots, want the last %d attempts'", n, maxShotAttempts)
	}
	for n := 1; n <= 60; n++ {
		if resp, _ := get(t, h, fmt.Sprintf("/task/api/a3/shot/%d", n)); resp.StatusCode != http.StatusNotFound {
			t.Errorf("a 31 MiB screenshot: %d, want 404", resp.StatusCode)
		}
	}
	for range 5 {
		// Counted, not kept: this process's allocations are the server's.
		resp, err := testClient.Get("http://" + h.Addr().String() + "/task/api/a3/shot/61")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || n != maxShot-1 {
			t.Errorf("a screenshot of %d bytes: %d with %d bytes", maxShot-1, resp.StatusCode, n)
		}
	}
	runtime.ReadMemStats(&after)
	grew := float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
	t.Logf("task page, 60 planted 31 MiB shots and 5 reads of an 8 MiB one: %.1f MB allocated", grew)
	if grew > 50 {
		t.Errorf("%.1f MB allocated, want under 50", grew)
	}
	if _, body := get(t, h, "/task/api/big"); !strings.Contains(string(body), "a long answer.") {
		t.Errorf("the task page of a done task with a 2 MB answer does not show it")
	}
}

// TestHTTPServer_BatchPageBounds: the batch page has the status page's
// bounds. One planted record of a batch's task (no daemon wrote it) with
// attempt times from year 1 to 9999 made /batch/NAME 68 MB (an axis tick
// every week of ten thousand years). Each case keeps the page under 200
// KB and draws at most the last records; the axis spans no more than the
// task's real span (submitted to now), and a task "submitted" in year 1
// still gets at most a dozen ticks.
func TestHTTPServer_BatchPageBounds(t *testing.T) {
	now := time.Now().UTC()
	year1 := time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC) // the 1st is the zero time, which means "none"
	year9999 := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	rec := func(n int, claimed, ended time.Time) taskfile.AttemptRecord {
		return taskfile.AttemptRecord{N: n, ClaimedAt: claimed, StartedAt: claimed, EndedAt: ended, Outcome: taskfile.AttemptRetried, Owner: "evil:1"}
	}
	for _, tc := range []struct {
		name     string
		dir      string
		attempts func() []taskfile.AttemptRecord
		submit   time.Time
		maxBars  int
	}{
		{name: "year 1 to 9999", dir: taskfile.DirDone, submit: now.Add(-time.Hour), maxBars: 2,
			attempts: func() []taskfile.AttemptRecord {
				return []taskfile.AttemptRecord{rec(1, year1, year9999), rec(2, year9999, year9999)}
			}},
		{name: "year 1 to 9999 submitted in year 1", dir: taskfile.DirFailed, submit: year1, maxBars: 2,
			attempts: func() []taskfile.AttemptRecord {
				return []taskfile.AttemptRecord{rec(1, year1, year9999), rec(2, year1, now)}
			}},
		{name: "running since year 1", dir: taskfile.DirRunning, submit: year1, maxBars: 1,
			attempts: func() []taskfile.AttemptRecord {
				return []taskfile.AttemptRecord{{N: 1, ClaimedAt: year1, StartedAt: year1}}
			}},
		{name: "5,000 attempts", dir: taskfile.DirDone, submit: now.Add(-time.Hour), maxBars: taskfile.MaxAttemptRecords,
			attempts: func() []taskfile.AttemptRecord {
				out := make([]taskfile.AttemptRecord, 5000)
				for i := range out {
					out[i] = rec(i+1, now.Add(-30*time.Minute+time.Duration(i)*time.Millisecond), now.Add(-10*time.Minute))
				}
				return out
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fixture.Spool(t)
			L := spool.NewLayout(cfg.Spool)
			tk := taskfile.Task{TaskID: "absurd", ModelKind: taskfile.KindAPI, Model: "writer", Content: "x", Batch: "planted",
				State: taskfile.StateSuccess, Attempt: 2, SubmittedAt: tc.submit, StartedAt: year1, FinishedAt: year9999, Attempts: tc.attempts()}
			data, err := tk.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(L.TaskPath(taskfile.KindAPI, tc.dir, "absurd"), data, spool.FilePerm); err != nil {
				t.Fatal(err)
			}
			h := startTestHTTP(t, cfg, nil)
			defer h.Stop()
			resp, body := get(t, h, "/batch/planted")
			t.Logf("%s: /batch/planted is %d bytes (%d SVG elements)", tc.name, len(body), bytes.Count(body, []byte("<line"))+bytes.Count(body, []byte("<rect")))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("/batch/planted: %d", resp.StatusCode)
			}
			if len(body) > 200<<10 {
				t.Errorf("/batch/planted is %d KB, want under 200 KB", len(body)>>10)
			}
			if n := bytes.Count(body, []byte(`data-task="absurd"`)); n == 0 || n > tc.maxBars {
				t.Errorf("the timeline draws %d bars of the planted task, want 1 to %d", n, tc.maxBars)
			}
			if tc.submit.Equal(year1) {
				return // the span is absurd, its ticks are not: the size above
			}
			from, to := svgSpan(t, body)
			if from.Before(now.Add(-2 * time.Hour)) {
				t.Errorf("the axis starts %s, before the task was submitted (%s)", from, tc.submit)
			}
			if to.After(now.Add(time.Hour)) {
				t.Errorf("the axis ends %s, after now (%s)", to, now)
			}
		})
	}
}

// svgSpan reads the timeline's data-from and data-to.
func svgSpan(t *testing.T, body []byte) (from, to time.Time) {
	t.Helper()
	attr := func(k string) time.Time {
		_, rest, ok := strings.Cut(string(body), k+`="`)
		if !ok {
			t.Fatalf("no %s on the timeline", k)
		}
		v, _, _ := strings.Cut(rest, `"`)
		tm, err := time.Parse(time.RFC3339, v)
		if err != nil {
			t.Fatalf("%s=%q: %v", k, v, err)
		}
		return tm
	}
	return attr("data-from"), attr("data-to")
}

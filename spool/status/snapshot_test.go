package status

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const testConfig = `
host: here
api: {concurrency: 2}
models:
  - {name: writer, kind: api, baseURL: "http://127.0.0.1:1/v1", price: {input: 2, output: 8}}
  - {name: cheap, kind: api, baseURL: "http://127.0.0.1:1/v1"}
  - {name: thinker, kind: web, site: chat, account: ops1}
  - {name: other, kind: web, site: chat, account: ops2}
sites:
  chat: {url: "http://127.0.0.1:1/", input: textarea, send: button, answer: .a}
`

func newSpool(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.ParseConfig([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Spool = filepath.Join(dir, "spool")
	cfg.Web.Profiles = filepath.Join(dir, "profiles")
	if err := spool.NewLayout(cfg.Spool).Create(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func put(t testing.TB, cfg *config.Config, k taskfile.Kind, dir string, tk taskfile.Task) {
	t.Helper()
	tk.ModelKind = k
	tk.State = taskfile.FolderState[dir]
	if tk.SubmittedAt.IsZero() {
		tk.SubmittedAt = t0.Add(-time.Hour)
	}
	if tk.Content == "" {
		tk.Content = "hello\nmulti-line: content\n  indented"
	}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spool.NewLayout(cfg.Spool).TaskPath(k, dir, tk.TaskID), data, 0o640); err != nil {
		t.Fatal(err)
	}
}

func done(id, batch string, start time.Time, d time.Duration) taskfile.Task {
	return taskfile.Task{TaskID: id, Model: "writer", Batch: batch, Attempt: 1, StartedAt: start, FinishedAt: start.Add(d), Result: "Answer: x"}
}

func TestSnapshot_CountsHeldAndETA(t *testing.T) {
	cfg := newSpool(t)
	L := spool.NewLayout(cfg.Spool)
	// api: 3 successes of 10s, 20s, 40s (median 20s), concurrency 2.
	put(t, cfg, taskfile.KindAPI, "done", done("a1", "b1", t0.Add(-50*time.Minute), 10*time.Second))
	put(t, cfg, taskfile.KindAPI, "done", done("a2", "b1", t0.Add(-40*time.Minute), 20*time.Second))
	put(t, cfg, taskfile.KindAPI, "done", done("a3", "", t0.Add(-30*time.Minute), 40*time.Second))
	a4 := done("a4", "b1", t0.Add(-20*time.Minute), 5*time.Second)
	a4.Error, a4.ErrorClass = "boom", taskfile.ClassPermanent
	put(t, cfg, taskfile.KindAPI, "failed", a4)
	put(t, cfg, taskfile.KindAPI, "running", taskfile.Task{TaskID: "a5", Model: "writer", Batch: "b1", Attempt: 2, Owner: "here:1",
		StartedAt: t0.Add(-5 * time.Second), HeartbeatAt: t0.Add(-2 * time.Second)})
	for i := range 3 {
		put(t, cfg, taskfile.KindAPI, "pending", taskfile.Task{TaskID: fmt.Sprintf("p%d", i), Model: "writer", Batch: "b1",
			SubmittedAt: t0.Add(time.Duration(i-10) * time.Minute)})
	}
	// A deferred retry.
	put(t, cfg, taskfile.KindAPI, "pending", taskfile.Task{TaskID: "d1", Model: "writer", Attempt: 1, NotBefore: t0.Add(90 * time.Second)})
	// Two rejected drops, one unparseable.
	os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, "failed"), "bad.yaml"), []byte("::: not yaml"), 0o640)
	os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, "failed"), "bad.error"), []byte("yaml: line 1\n"), 0o640)
	os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, "failed"), "dup~2.yml"), []byte("model: writer\n"), 0o640)
	os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, "failed"), "dup~2.error"), []byte("dup\n"), 0o640)

	// web: paused, no successes, one account disabled by file, one stale running.
	os.WriteFile(L.Paused(taskfile.KindWeb), nil, 0o640)
	os.WriteFile(filepath.Join(L.Accounts(), "ops2.disabled"), nil, 0o640)
	put(t, cfg, taskfile.KindWeb, "pending", taskfile.Task{TaskID: "w1", Model: "thinker", Batch: "b1"})
	put(t, cfg, taskfile.KindWeb, "pending", taskfile.Task{TaskID: "w2", Model: "other", Batch: "b2"})
	put(t, cfg, taskfile.KindWeb, "pending", taskfile.Task{TaskID: "w3", Model: "other"})
	put(t, cfg, taskfile.KindWeb, "running", taskfile.Task{TaskID: "w4", Model: "thinker", Attempt: 1, Owner: "there:7",
		StartedAt: t0.Add(-5 * time.Minute), HeartbeatAt: t0.Add(-100 * time.Second)})

	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	web, api := st.Lanes[0], st.Lanes[1]
	if web.Lane != "web" || api.Lane != "api" {
		t.Fatalf("lane order: %s %s", web.Lane, api.Lane)
	}
	if want := (Counts{Pending: 4, Running: 1, Success: 3, Failed: 1, Total: 9}); api.Counts != want {
		t.Errorf("api counts = %+v, want %+v", api.Counts, want)
	}
	if api.Rejected != 2 || api.Progress != (Progress{Finished: 4, Total: 9, Percent: 44}) {
		t.Errorf("api rejected %d progress %+v", api.Rejected, api.Progress)
	}
	if api.Concurrency != 2 || web.Concurrency != 1 {
		t.Errorf("concurrency api %d web %d", api.Concurrency, web.Concurrency)
	}
	if len(api.Running) != 1 || api.Running[0].ElapsedSeconds != 5 || api.Running[0].HeartbeatAgeSeconds != 2 || api.Running[0].Stale || api.Running[0].Attempt != 2 {
		t.Errorf("api running = %+v", api.Running)
	}
	if len(web.Running) != 1 || !web.Running[0].Stale || web.Running[0].HeartbeatAgeSeconds != 100 {
		t.Errorf("web running = %+v", web.Running)
	}
	// api ETA: median 20s; a5 has 15s left on slot 1; p0 on slot 2 (0-20),
	// p1 on slot 1 (15-35), p2 on slot 2 (20-40), d1 not before 90s: 90-110.
	if api.ETA.TypicalSeconds != 20 || api.ETA.Samples != 3 || api.ETA.Seconds == nil || *api.ETA.Seconds != 110 {
		t.Errorf("api ETA = %+v (seconds %v)", api.ETA, deref(api.ETA.Seconds))
	}
	if len(api.Held) != 1 || api.Held[0].Kind != HeldDeferred || api.Held[0].Count != 1 || !api.Held[0].Until.Equal(t0.Add(90*time.Second)) {
		t.Errorf("api held = %+v", api.Held)
	}
	if web.ETA.Seconds != nil || web.ETA.Note != "lane paused" || web.ETA.Samples != 0 || web.ETA.TypicalSeconds != DefaultWebDuration.Seconds() {
		t.Errorf("web ETA = %+v", web.ETA)
	}
	kinds := map[string]Held{}
	for _, h := range web.Held {
		kinds[h.Kind] = h
	}
	if h := kinds[HeldAccount]; h.Account != "ops2" || h.Count != 2 {
		t.Errorf("web account held = %+v (all %+v)", h, web.Held)
	}
	if _, ok := kinds[HeldPaused]; !ok {
		t.Errorf("web paused not held: %+v", web.Held)
	}
	// Batches: b1 has api share (ETA: p2 ends at 40s) and a paused web share.
	if len(st.Batches) != 2 || st.Batches[0].Batch != "b1" || st.Batches[1].Batch != "b2" {
		t.Fatalf("batches = %+v", st.Batches)
	}
	b1 := st.Batches[0]
	if want := (Counts{Pending: 4, Running: 1, Success: 2, Failed: 1, Total: 8}); b1.Counts != want {
		t.Errorf("b1 counts = %+v, want %+v", b1.Counts, want)
	}
	if len(b1.Lanes) != 2 || b1.Lanes[1].ETA.Seconds == nil || *b1.Lanes[1].ETA.Seconds != 40 || b1.Lanes[0].ETA.Seconds != nil {
		t.Errorf("b1 lanes = %+v", b1.Lanes)
	}
	if b1.ETA.Seconds != nil || b1.ETA.Note != "web: lane paused" {
		t.Errorf("b1 ETA = %+v", b1.ETA)
	}

	// Resume web and enable ops2 by config disable of ops1 instead; the
	// runner lock names a holder on another host.
	os.Remove(L.Paused(taskfile.KindWeb))
	os.Remove(filepath.Join(L.Accounts(), "ops2.disabled"))
	os.Remove(L.TaskPath(taskfile.KindWeb, "running", "w4"))
	cfg.Accounts = map[string]config.AccountConf{"ops1": {Disabled: true}}
	os.MkdirAll(cfg.Web.Profiles, 0o700)
	os.WriteFile(config.RunnerLockPath(cfg.Web.Profiles), []byte("4242 elsewhere\n"), 0o600)
	st, err = snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	web = st.Lanes[0]
	if web.Runner != "pid 4242 on elsewhere" {
		t.Errorf("runner = %q", web.Runner)
	}
	kinds = map[string]Held{}
	for _, h := range web.Held {
		kinds[h.Kind] = h
	}
	if h := kinds[HeldAccount]; h.Account != "ops1" || h.Count != 1 {
		t.Errorf("account held = %+v", web.Held)
	}
	if h := kinds[HeldRunner]; h.PID != 4242 || h.Host != "elsewhere" || h.Count != 2 {
		t.Errorf("runner held = %+v", web.Held)
	}
	// Web: 2 runnable at the default 120s each, one at a time.
	if web.ETA.Seconds == nil || *web.ETA.Seconds != 240 || web.ETA.Note == "" {
		t.Errorf("web ETA = %+v", web.ETA)
	}
	// The holder's process is gone on this host: no runner.
	os.WriteFile(config.RunnerLockPath(cfg.Web.Profiles), []byte("999999999 here\n"), 0o600)
	st, _ = snapshot(cfg, t0)
	if st.Lanes[0].Runner != "" {
		t.Errorf("dead holder reported: %q", st.Lanes[0].Runner)
	}
}

func TestSnapshot_Standby(t *testing.T) {
	cfg := newSpool(t)
	s := NewSnapshotter(spool.NewStore(cfg, nil), func() []taskfile.LaneInfo {
		return []taskfile.LaneInfo{{Kind: taskfile.KindWeb, Concurrency: 1, Standby: true, Holder: "pid 9 on x"}}
	})
	st, err := s.Snapshot(t0)
	if err != nil {
		t.Fatal(err)
	}
	if h := st.Lanes[0].Held; len(h) != 1 || h[0].Kind != HeldStandby || h[0].Message != "this daemon is in standby behind pid 9 on x" {
		t.Errorf("held = %+v", h)
	}
}

func TestSnapshot_MedianOfLast50(t *testing.T) {
	cfg := newSpool(t)
	// 60 successes: the 10 oldest took 1000s, the latest 50 took i seconds.
	for i := range 60 {
		d := time.Duration(i-9) * time.Second
		if i < 10 {
			d = 1000 * time.Second
		}
		put(t, cfg, taskfile.KindAPI, "done", done(fmt.Sprintf("t%02d", i), "", t0.Add(time.Duration(i)*time.Hour-100*time.Hour), d))
	}
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	// durations 1..50: median 25.5
	if e := st.Lanes[1].ETA; e.Samples != 50 || e.TypicalSeconds != 25.5 || *e.Seconds != 0 {
		t.Errorf("ETA = %+v", e)
	}
}

func TestSnapshot_CacheSeesChanges(t *testing.T) {
	cfg := newSpool(t)
	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	tk := taskfile.Task{TaskID: "r", Model: "writer", Batch: "x", Attempt: 1, StartedAt: t0.Add(-time.Minute), HeartbeatAt: t0.Add(-30 * time.Second)}
	put(t, cfg, taskfile.KindAPI, "running", tk)
	st, _ := s.Snapshot(t0)
	if st.Lanes[1].Running[0].HeartbeatAgeSeconds != 30 {
		t.Fatalf("age %v", st.Lanes[1].Running[0].HeartbeatAgeSeconds)
	}
	tk.HeartbeatAt = t0.Add(-1500 * time.Millisecond) // same size, new content
	put(t, cfg, taskfile.KindAPI, "running", tk)
	p := spool.NewLayout(cfg.Spool).TaskPath(taskfile.KindAPI, "running", "r")
	os.Chtimes(p, t0, t0.Add(time.Second)) // make sure mtime moved
	st, _ = s.Snapshot(t0)
	if got := st.Lanes[1].Running[0].HeartbeatAgeSeconds; got != 1.5 {
		t.Errorf("cached stale summary: age %v", got)
	}
	os.Remove(p)
	st, _ = s.Snapshot(t0)
	if st.Lanes[1].Counts.Total != 0 || s.cachedFiles() != 0 {
		t.Errorf("after removal: %+v, cache %d", st.Lanes[1].Counts, s.cachedFiles())
	}
}

func TestParseSummary_FallsBack(t *testing.T) {
	for _, tc := range []struct {
		name, in, batch string
	}{
		{"plain", "taskId: a\nmodel: m\nbatch: b 1\ncontent: x\n", "b 1"},
		{"quoted", "taskId: a\nmodel: m\nbatch: \"q\\tx\"\ncontent: x\n", "q\tx"},
		{"continued", "taskId: a\nmodel: m\nbatch: long\n  more\ncontent: x\n", "long more"},
		{"block content", "taskId: a\nmodel: m\ncontent: |\n  batch: no\nbatch: yes\n", "yes"},
		{"crlf", "taskId: a\r\nmodel: m\r\nbatch: c\r\ncontent: x\r\n", "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := parseSummary([]byte(tc.in))
			if !ok || s.batch != tc.batch || s.id != "a" {
				t.Errorf("got %+v ok=%v, want batch %q", s, ok, tc.batch)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// BenchmarkSnapshot_10kDone measures a cold snapshot (as the CLI takes)
// and a warm one (as the daemon's page takes) of 10,000 done files.
func BenchmarkSnapshot_10kDone(b *testing.B) {
	cfg := newSpool(b)
	for i := range 10000 {
		tk := done(fmt.Sprintf("t%05d", i), fmt.Sprintf("b%d", i%20), t0.Add(-time.Duration(i)*time.Minute), time.Duration(10+i%10)*time.Second)
		tk.Result = "Answer: a few lines\nof generated text\n"
		put(b, cfg, taskfile.KindAPI, "done", tk)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := snapshot(cfg, t0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
		s.Snapshot(t0)
		for b.Loop() {
			if _, err := s.Snapshot(t0); err != nil {
				b.Fatal(err)
			}
		}
	})
	// done/ just changed: listed again, by names and inodes.
	b.Run("changed", func(b *testing.B) {
		done := spool.NewLayout(cfg.Spool).Lane(taskfile.KindAPI, taskfile.DirDone)
		s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
		s.Snapshot(t0)
		at := time.Now().Add(-time.Hour)
		for b.Loop() {
			at = at.Add(time.Second)
			if err := os.Chtimes(done, at, at); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Snapshot(t0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A per-host pause file (shared spools) is named whichever host reads it.
func TestSnapshot_PausedOnOneHost(t *testing.T) {
	cfg := newSpool(t)
	l := spool.NewLayout(cfg.Spool)
	if err := os.WriteFile(l.Paused(taskfile.KindWeb)+".render-02", nil, 0o640); err != nil {
		t.Fatal(err)
	}
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	h := st.Lanes[0].Held
	if len(h) != 1 || h[0].Kind != HeldPaused || h[0].Host != "render-02" ||
		h[0].Message != "lane paused on host render-02 (spoolgate resume web --host render-02)" {
		t.Errorf("held = %+v", h)
	}
}

// snapshot reads cfg's spool once, through a Store of its own.
func snapshot(cfg *config.Config, now time.Time) (*Status, error) {
	return NewSnapshotter(spool.NewStore(cfg, nil), nil).Snapshot(now)
}

// TestSnapshot_FallingBack: a model whose last answers every one fell
// back from the first read method is named, with the methods of the
// latest; one that read its latest answer first, or has too few, is not.
func TestSnapshot_FallingBack(t *testing.T) {
	cfg := newSpool(t)
	web := func(id, model, method, fellBack string, i int) taskfile.Task {
		tk := done(id, "", t0.Add(time.Duration(i)*time.Minute-time.Hour), time.Second)
		tk.Model, tk.ResultFormat, tk.ResultMethod, tk.ResultFallback = model, "markdown", method, fellBack
		return tk
	}
	// thinker: read first once, long ago, then 5 answers by dom after
	// network failed. other: 4 fell back, then the latest read first.
	put(t, cfg, taskfile.KindWeb, "done", web("th-0", "thinker", "network", "", 0))
	for i := 1; i <= 5; i++ {
		put(t, cfg, taskfile.KindWeb, "done", web(fmt.Sprintf("th-%d", i), "thinker", "dom", "network", i))
	}
	for i := 1; i <= 4; i++ {
		put(t, cfg, taskfile.KindWeb, "done", web(fmt.Sprintf("ot-%d", i), "other", "dom", "network,copy", i))
	}
	put(t, cfg, taskfile.KindWeb, "done", web("ot-5", "other", "network", "", 5))
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []FallingBack{{Model: "thinker", Answers: 5, Methods: "network", Method: "dom"}}
	if got := st.Lanes[0].FallingBack; !slices.Equal(got, want) {
		t.Errorf("FallingBack = %+v, want %+v", got, want)
	}
}

// TestSnapshot_Tokens: the successes' reported tokens total per lane and
// batch, priced where the model has a price; a failure's and a web
// answer's (none reported) do not count.
func TestSnapshot_Tokens(t *testing.T) {
	cfg := newSpool(t)
	for i := range 3 {
		tk := done(fmt.Sprintf("t%d", i), "b", t0.Add(-time.Hour), time.Second)
		tk.Usage = taskfile.Usage{PromptTokens: 100, CompletionTokens: 200}
		put(t, cfg, taskfile.KindAPI, "done", tk)
	}
	unpriced := done("u", "b", t0.Add(-time.Hour), time.Second)
	unpriced.Model, unpriced.Usage = "cheap", taskfile.Usage{PromptTokens: 5, CompletionTokens: 5}
	put(t, cfg, taskfile.KindAPI, "done", unpriced)
	failed := done("f", "b", t0.Add(-time.Hour), time.Second)
	failed.Usage = taskfile.Usage{PromptTokens: 1000, CompletionTokens: 1000}
	put(t, cfg, taskfile.KindAPI, "failed", failed)
	// A planted answer of a model no config names is totalled, under
	// OtherModel: no new key per name a file makes up.
	planted := done("p", "b", t0.Add(-time.Hour), time.Second)
	planted.Model, planted.Usage = "made-up-1", taskfile.Usage{PromptTokens: 1, CompletionTokens: 1}
	put(t, cfg, taskfile.KindAPI, "done", planted)
	planted.TaskID, planted.Model = "p2", "made-up-2"
	put(t, cfg, taskfile.KindAPI, "done", planted)
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	cost := (300.0*2 + 600.0*8) / 1e6
	for name, got := range map[string]Tokens{"lane": st.Lanes[1].Tokens, "batch": st.Batches[0].Tokens} {
		if got.Prompt != 307 || got.Completion != 607 || got.Cost == nil || math.Abs(*got.Cost-cost) > 1e-12 || got.Unpriced != 3 {
			t.Errorf("%s tokens %+v (cost %v), want 307 in, 607 out, cost %v, 3 unpriced", name, got, got.Cost, cost)
		}
	}
	mt := st.Lanes[1].ModelTokens
	if len(mt) != 3 || mt["writer"].Prompt != 300 || mt["cheap"].Prompt != 5 || mt[OtherModel].Prompt != 2 || mt[OtherModel].Unpriced != 2 {
		t.Errorf("model tokens %+v; want writer 300, cheap 5, (other) 2 in", mt)
	}
}

// TestWaitingSince: the runner lock's holder is blamed only for tasks that
// have waited past runnerGrace; a task submitted a moment ago, or one still
// in its retry back-off, is not a sign of a login session.
func TestWaitingSince(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	before := now.Add(-runnerGrace)
	tests := []struct {
		name    string
		pending []summary
		want    int
	}{
		{"none", nil, 0},
		{"just submitted", []summary{{submittedAt: now.Add(-time.Second)}}, 0},
		{"waited past the grace", []summary{{submittedAt: now.Add(-time.Minute)}}, 1},
		{"back-off ends after", []summary{{submittedAt: now.Add(-time.Hour), notBefore: now.Add(time.Minute)}}, 0},
		{"back-off ended long ago", []summary{{submittedAt: now.Add(-time.Hour), notBefore: now.Add(-time.Minute)}}, 1},
		{"mixed", []summary{{submittedAt: now.Add(-time.Minute)}, {submittedAt: now}, {submittedAt: now.Add(-time.Hour)}}, 2},
	}
	for _, tt := range tests {
		if got := waitingSince(tt.pending, before); got != tt.want {
			t.Errorf("%s: %d waiting, want %d", tt.name, got, tt.want)
		}
	}
}

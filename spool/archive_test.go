package spool

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// walkFiles lists every regular file under root, relative, with content.
func walkFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStore_Archive(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("host: h\nretention: {done: 30d, failed: 90d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = t.TempDir()
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	put := func(k taskfile.Kind, dir, id string, fin time.Time) {
		tk := taskfile.Task{TaskID: id, ModelKind: k, Model: "m", Content: "x", State: taskfile.FolderState[dir], FinishedAt: fin}
		data, _ := tk.Encode()
		p := s.Layout.TaskPath(k, dir, id)
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, fin, fin)
	}
	file := func(p, content string, mtime time.Time) {
		os.MkdirAll(filepath.Dir(p), 0o750)
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
	}
	logs := s.Layout.Lane(taskfile.KindWeb, taskfile.DirLogs)
	put(taskfile.KindWeb, taskfile.DirDone, "old", now.Add(-40*day)) // 2025-05: archived
	file(filepath.Join(logs, "old.log"), "log of old", now)
	file(filepath.Join(logs, "old.2.png"), "png", now)
	file(filepath.Join(logs, "old.2.html"), "html", now)
	file(filepath.Join(logs, "old.x.log"), "log of old.x", now) // another task's log
	file(filepath.Join(s.Layout.Lane(taskfile.KindWeb, taskfile.DirOutputs), "old", "01.png"), "generated png", now)
	put(taskfile.KindWeb, taskfile.DirDone, "recent", now.Add(-10*day))           // kept
	put(taskfile.KindWeb, taskfile.DirFailed, "failed-60", now.Add(-60*day))      // kept: failed keeps 90d
	put(taskfile.KindWeb, taskfile.DirFailed, "failed-100", now.Add(-100*day))    // 2025-03: archived
	put(taskfile.KindWeb, taskfile.DirCanceled, "canceled-1y", now.Add(-365*day)) // kept: no canceled retention
	// A taskId used again: the first one is already archived in 2025-05.
	put(taskfile.KindAPI, taskfile.DirDone, "again", now.Add(-35*day))
	file(filepath.Join(s.Layout.Lane(taskfile.KindAPI, taskfile.DirLogs), "again.log"), "second run", now)
	file(filepath.Join(s.Layout.Archive(taskfile.KindAPI), "2025-05", taskfile.DirDone, "again.yaml"), "first run", now.Add(-50*day))
	file(filepath.Join(s.Layout.Archive(taskfile.KindAPI), "2025-05", taskfile.DirLogs, "again.log"), "first log", now.Add(-50*day))
	// An old rejected drop, kept as a pair; an .error left alone by a crash.
	failed := s.Layout.Lane(taskfile.KindAPI, taskfile.DirFailed)
	file(filepath.Join(failed, "junk.yml"), "not: [yaml", now.Add(-200*day))
	file(filepath.Join(failed, "junk.error"), "yaml: line 1: bad\n", now.Add(-200*day))
	file(filepath.Join(failed, "lone.error"), "model: unknown\n", now.Add(-120*day))
	// A file modified recently, whatever its finishedAt says, is not read.
	put(taskfile.KindAPI, taskfile.DirDone, "touched", now.Add(-90*day))
	os.Chtimes(s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, "touched"), now, now)

	before := walkFiles(t, cfg.Spool)
	st, err := s.Archive(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	after := walkFiles(t, cfg.Spool)
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after: archiving must not delete or add", len(before), len(after))
	}
	content := map[string]int{}
	for _, c := range before {
		content[c]++
	}
	for _, c := range after {
		content[c]--
	}
	for c, n := range content {
		if n != 0 {
			t.Errorf("content %q: %+d copies after archiving", c, -n)
		}
	}
	want := []string{
		"api/archive/2025-05/done/again.yaml", "api/archive/2025-05/done/again~2.yaml",
		"api/archive/2025-05/logs/again.log", "api/archive/2025-05/logs/again~2.log",
		"api/archive/2024-11/failed/junk.yml", "api/archive/2024-11/failed/junk.error",
		"api/archive/2025-02/failed/lone.error",
		"web/archive/2025-05/done/old.yaml", "web/archive/2025-05/logs/old.log",
		"web/archive/2025-05/logs/old.2.png", "web/archive/2025-05/logs/old.2.html", "web/archive/2025-05/outputs/old/01.png",
		"web/archive/2025-03/failed/failed-100.yaml",
		"web/done/recent.yaml", "web/failed/failed-60.yaml", "web/canceled/canceled-1y.yaml",
		"web/logs/old.x.log", "api/done/touched.yaml",
	}
	for _, w := range want {
		if _, ok := after[filepath.FromSlash(w)]; !ok {
			t.Errorf("missing %s", w)
		}
	}
	if after[filepath.FromSlash("api/archive/2025-05/logs/again~2.log")] != "second run" {
		t.Error("the second run's log is not beside its task")
	}
	if st.Tasks != 4 || st.Files != 7 || st.Failed != 0 {
		t.Errorf("stats %+v, want 4 tasks (old, failed-100, again, junk) and 7 files (3 of old, its outputs, again.log, 2 .error)", st)
	}
	var left []string
	for p := range after {
		if strings.Contains(p, string(filepath.Separator)+taskfile.DirArchive+string(filepath.Separator)) {
			continue
		}
		left = append(left, p)
	}
	sort.Strings(left)
	t.Logf("left in place: %v", left)
	// A second pass finds nothing more to do.
	if st, err := s.Archive(context.Background(), now); err != nil || st != (ArchiveStats{}) {
		t.Errorf("second pass: %+v %v", st, err)
	}
	if got := s.Layout.ArchiveMonths(taskfile.KindAPI); len(got) != 3 || filepath.Base(got[0]) != "2024-11" {
		t.Errorf("archive months %v", got)
	}
}

func TestStore_ArchiveOff(t *testing.T) {
	cfg, _ := config.ParseConfig([]byte("host: h\n"))
	cfg.Spool = t.TempDir()
	s := NewStore(cfg, nil)
	s.Layout.Create()
	tk := taskfile.Task{TaskID: "x", ModelKind: taskfile.KindAPI, Model: "m", Content: "x", State: taskfile.StateSuccess, FinishedAt: time.Unix(0, 0)}
	data, _ := tk.Encode()
	os.WriteFile(s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, "x"), data, 0o640)
	if st, err := s.Archive(context.Background(), time.Now()); err != nil || st.Tasks != 0 {
		t.Errorf("without retention: %+v %v", st, err)
	}
}

// TestStore_ArchiveKeepsParents: a finished task past its retention stays
// in its lane while a pending task waits for it (after:, followUp:): the
// child's claim reads its parents there, and would wait for ever for one
// moved to the archive. Once nothing waits for it, it is archived.
func TestStore_ArchiveKeepsParents(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("host: h\nretention: {done: 30d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = t.TempDir()
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-40 * 24 * time.Hour)
	for _, tk := range []taskfile.Task{
		{TaskID: "outline", State: taskfile.StateSuccess, FinishedAt: old},
		{TaskID: "draft", State: taskfile.StateSuccess, FinishedAt: old},
		{TaskID: "lonely", State: taskfile.StateSuccess, FinishedAt: old},
	} {
		tk.ModelKind, tk.Model, tk.Content = taskfile.KindAPI, "m", "x"
		data, _ := tk.Encode()
		p := s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, tk.TaskID)
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	for _, tk := range []taskfile.Task{
		{TaskID: "article", ModelKind: taskfile.KindWeb, Model: "w", After: []string{"outline"}, Content: "{{outline.result}}", State: taskfile.StatePending},
		{TaskID: "shorter", ModelKind: taskfile.KindWeb, Model: "w", FollowUp: "draft", Content: "shorter", State: taskfile.StatePending},
	} {
		data, _ := tk.Encode()
		if err := os.WriteFile(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, tk.TaskID), data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Archive(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"outline": taskfile.DirDone, "draft": taskfile.DirDone, "lonely": ""} {
		if got := s.Layout.Locate(taskfile.KindAPI, id); got != want {
			t.Errorf("%s is in %q after the pass, want %q", id, got, want)
		}
	}
	// The children ran: their parents go the way of all tasks.
	for _, id := range []string{"article", "shorter"} {
		os.Remove(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, id))
	}
	if _, err := s.Archive(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if got := s.Layout.Locate(taskfile.KindAPI, "outline"); got != "" {
		t.Errorf("outline is still in %q with no child waiting", got)
	}
}

package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Archive returns <lane>/archive.
func (l Layout) Archive(k taskfile.Kind) string { return l.Lane(k, taskfile.DirArchive) }

// ArchiveMonths lists the month folders of lane k's archive, oldest first.
func (l Layout) ArchiveMonths(k taskfile.Kind) []string {
	ents, err := fsx.ReadDir(l.Archive(k))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && monthRe.MatchString(e.Name()) {
			out = append(out, filepath.Join(l.Archive(k), e.Name()))
		}
	}
	return out
}

var monthRe = regexp.MustCompile(`^\d{4}-\d{2}$`)

// ArchiveStats says what one archive pass did.
type ArchiveStats struct {
	Tasks  int // task files moved (rejected drops included)
	Files  int // logs, screenshots and .error files moved with them
	Failed int // tasks left in place for an error (logged; tried next pass)
}

// Archive moves every finished task of both lanes that finished longer ago
// than its folder's retention (cfg.Retention) into the lane's archive,
// with its log and screenshots (<lane>/logs/TASKID.log, TASKID.N.png,
// TASKID.N.html). Nothing is deleted and nothing is overwritten: every move
// is a no-replace move, and a name already taken in the archive (a taskId
// used again after its first task was archived) gets a ~N suffix. Logs go
// first, so a crash in between leaves the task in place, and the next pass
// moves it to the same month. Several daemons may archive one spool at
// once: of two moves of one file, one wins and the other skips the task.
// A rejected drop (NAME.yaml beside NAME.error in failed/) is archived as
// the pair, by the time of its .error.
func (s *Store) Archive(ctx context.Context, now time.Time) (ArchiveStats, error) {
	var st ArchiveStats
	if s.Cfg.Retention.Shortest() == 0 {
		return st, nil
	}
	waited := s.waitedFor()
	for _, k := range taskfile.Kinds {
		a := &archiver{s: s, k: k, stats: &st, waited: waited}
		for _, dir := range taskfile.FinalDirs {
			r := s.Cfg.Retention.For(dir)
			if r <= 0 {
				continue
			}
			if err := a.dir(ctx, dir, now.Add(-r)); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

type archiver struct {
	s     *Store
	k     taskfile.Kind
	stats *ArchiveStats
	logs  map[string][]string // taskId → its files in logs/, listed on first need
	// waited are the tasks that pending tasks wait for (after:,
	// followUp:): they stay in their lane, where the child's claim reads
	// them, whatever their age.
	waited map[string]bool
}

// waitedFor is the set of task ids that a pending task of either lane
// waits for (its parents, until its claim fills it from them).
func (s *Store) waitedFor() map[string]bool {
	out := map[string]bool{}
	for _, k := range taskfile.Kinds {
		dir := s.Layout.Lane(k, taskfile.DirPending)
		names, err := fsx.ReadDirNames(dir)
		if err != nil {
			continue
		}
		for _, n := range names {
			if !taskfile.IsTaskFileName(n) || fsx.IsOwnTemp(n) {
				continue
			}
			if sum, ok := readSummary(filepath.Join(dir, n)); ok && sum.After != "" {
				for _, p := range strings.Split(sum.After, ",") {
					out[p] = true
				}
			}
		}
	}
	return out
}

func (a *archiver) dir(ctx context.Context, dir string, cutoff time.Time) error {
	path := a.s.Layout.Lane(a.k, dir)
	ents, err := fsx.ReadDir(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("archive %s: %w", path, err)
	}
	rejected := map[string]bool{}
	if dir == taskfile.DirFailed {
		rejected = taskfile.RejectedDrops(ents)
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if !e.Type().IsRegular() || fsx.IsOwnTemp(name) {
			continue
		}
		switch {
		case taskfile.IsTaskFileName(name) && rejected[taskfile.TrimTaskExt(name)]:
			a.rejectedDrop(dir, taskfile.TrimTaskExt(name), name, cutoff)
		case taskfile.IsTaskFileName(name):
			a.task(dir, name, cutoff)
		case strings.HasSuffix(name, taskfile.ReasonFileName("")):
			// An .error whose drop is gone: its pair was archived and a
			// crash came before the .error followed.
			base := strings.TrimSuffix(name, taskfile.ReasonFileName(""))
			if !names[base+".yaml"] && !names[base+".yml"] {
				a.rejectedDrop(dir, base, "", cutoff)
			}
		}
	}
	return nil
}

// task archives one task file if it finished before cutoff, unless a
// pending task waits for it.
func (a *archiver) task(dir, name string, cutoff time.Time) {
	if a.waited[taskfile.TrimTaskExt(name)] {
		return
	}
	src := filepath.Join(a.s.Layout.Lane(a.k, dir), name)
	fi, err := os.Lstat(src)
	// The final write comes after finishedAt is set: a file modified since
	// cutoff finished since cutoff, and need not be read.
	if err != nil || fi.ModTime().After(cutoff) {
		return
	}
	fin := fi.ModTime()
	sum, ok := readSummary(src)
	if ok && !sum.FinishedAt.IsZero() {
		fin = sum.FinishedAt
	}
	if fin.After(cutoff) {
		return
	}
	id := taskfile.TrimTaskExt(name)
	if ok && sum.TaskID != "" && sum.TaskID != id {
		ok = false // a file whose name is not its id: move it alone
	}
	month := filepath.Join(a.s.Layout.Archive(a.k), fin.UTC().Format("2006-01"))
	var logs []string
	if ok {
		logs = a.logFiles(id)
	}
	// One suffix for the task and its logs, free for all of them.
	logDir := filepath.Join(month, taskfile.DirLogs)
	dst := filepath.Join(month, dir)
	for _, d := range []string{dst, logDir} {
		if err := a.s.files.MkdirBeneath(d); err != nil {
			a.fail(src, err)
			return
		}
	}
	// The task's generated files (<lane>/outputs/ID, its artifacts:) go
	// with it, to <month>/outputs/ID: its result's links (../outputs/ID/)
	// hold from the archive's done/ as they did from the lane's.
	outFrom, outDir := "", filepath.Join(month, taskfile.DirOutputs)
	if fi, err := os.Lstat(filepath.Join(a.s.Layout.Lane(a.k, taskfile.DirOutputs), id)); ok && err == nil && fi.IsDir() {
		outFrom = filepath.Join(a.s.Layout.Lane(a.k, taskfile.DirOutputs), id)
		if err := a.s.files.MkdirBeneath(outDir); err != nil {
			a.fail(src, err)
			return
		}
	}
	suffix := freeSuffix(func(sfx string) []string {
		out := []string{filepath.Join(dst, id+sfx+strings.TrimPrefix(name, id))}
		for _, l := range logs {
			out = append(out, filepath.Join(logDir, id+sfx+strings.TrimPrefix(l, id)))
		}
		if outFrom != "" {
			out = append(out, filepath.Join(outDir, id+sfx))
		}
		return out
	})
	if outFrom != "" {
		if err := a.s.files.RenameNoReplace(outFrom, filepath.Join(outDir, id+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			a.fail(src, err)
			return
		}
		a.stats.Files++
	}
	for _, l := range logs {
		from := filepath.Join(a.s.Layout.Lane(a.k, taskfile.DirLogs), l)
		if err := a.s.files.RenameNoReplace(from, filepath.Join(logDir, id+suffix+strings.TrimPrefix(l, id))); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // another daemon archives it (or the task) right now
			}
			a.fail(src, err)
			return
		}
		a.stats.Files++
	}
	if err := a.s.files.RenameNoReplace(src, filepath.Join(dst, id+suffix+strings.TrimPrefix(name, id))); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			a.fail(src, err)
		}
		return
	}
	a.stats.Tasks++
}

// rejectedDrop archives NAME.yaml (if given) and NAME.error, by the time of
// the .error, keeping the two names paired.
func (a *archiver) rejectedDrop(dir, base, name string, cutoff time.Time) {
	from := a.s.Layout.Lane(a.k, dir)
	fi, err := os.Lstat(filepath.Join(from, base+".error"))
	if err != nil || fi.ModTime().After(cutoff) {
		return
	}
	dst := filepath.Join(a.s.Layout.Archive(a.k), fi.ModTime().UTC().Format("2006-01"), dir)
	if err := a.s.files.MkdirBeneath(dst); err != nil {
		a.fail(filepath.Join(from, base+".error"), err)
		return
	}
	ext := strings.TrimPrefix(name, base)
	suffix := freeSuffix(func(sfx string) []string {
		return []string{filepath.Join(dst, base+sfx+ext), filepath.Join(dst, base+sfx+".error")}
	})
	if name != "" {
		if err := a.s.files.RenameNoReplace(filepath.Join(from, name), filepath.Join(dst, base+suffix+ext)); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				a.fail(filepath.Join(from, name), err)
			}
			return
		}
		a.stats.Tasks++
	}
	if err := a.s.files.RenameNoReplace(filepath.Join(from, base+".error"), filepath.Join(dst, base+suffix+".error")); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			a.fail(filepath.Join(from, base+".error"), err)
		}
		return
	}
	a.stats.Files++
}

func (a *archiver) fail(path string, err error) {
	a.stats.Failed++
	a.s.Limiter().Fail("archive:"+path, "archive: left in place, tried again next pass", err, "path", path)
}

// logFiles lists the files of logs/ that belong to task id: ID.log and
// the screenshots ID.N.png, ID.N.html.
func (a *archiver) logFiles(id string) []string {
	if a.logs == nil {
		a.logs = map[string][]string{}
		ents, _ := fsx.ReadDir(a.s.Layout.Lane(a.k, taskfile.DirLogs))
		for _, e := range ents {
			if !e.Type().IsRegular() || fsx.IsOwnTemp(e.Name()) {
				continue
			}
			if owner := logOwner(e.Name()); owner != "" {
				a.logs[owner] = append(a.logs[owner], e.Name())
			}
		}
	}
	return a.logs[id]
}

var shotRe = regexp.MustCompile(`^(.+)\.[0-9]+\.(png|html)$`)

// logOwner is the taskId a file of logs/ belongs to, or "".
func logOwner(name string) string {
	if id, ok := strings.CutSuffix(name, ".log"); ok {
		return id
	}
	if m := shotRe.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// freeSuffix returns "" or the first "~N" for which none of paths(suffix)
// exists.
func freeSuffix(paths func(suffix string) []string) string {
	for n := 1; ; n++ {
		sfx := ""
		if n > 1 {
			sfx = "~" + strconv.Itoa(n)
		}
		free := true
		for _, p := range paths(sfx) {
			if _, err := os.Lstat(p); err == nil {
				free = false
				break
			}
		}
		if free || n > 10000 {
			return sfx
		}
	}
}

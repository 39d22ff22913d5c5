package spool

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// IntakeOutcome says what one intake did.
type IntakeOutcome int

const (
	// Vanished: the file was gone before it could be taken; nothing done.
	Vanished IntakeOutcome = iota
	// Accepted: the task is now pending/TASKID.yaml.
	Accepted
	// Rejected: the drop is in failed/ with NAME.error beside it.
	Rejected
)

// IntakeResult says what intake did with one drop.
type IntakeResult struct {
	Outcome IntakeOutcome
	Lane    taskfile.Kind
	Task    *taskfile.Task // when accepted: the normalized pending task
	Reason  string         // when rejected: the one-line reason
	Path    string         // where the file is now
}

// Intake takes one drop, dir/name, where dropLane is the lane whose
// incoming/ holds it ("" for the lane-less drop box). A valid drop becomes
// pending/TASKID.yaml, normalized; an invalid one moves to the lane's
// failed/ with its bytes untouched and a one-line NAME.error beside it.
// The drop is never deleted and never overwrites anything.
func (s *Store) Intake(dir, name string, dropLane taskfile.Kind) (IntakeResult, error) {
	if !s.foldersSafe(dir) {
		return IntakeResult{Outcome: Vanished}, nil // held, logged once: the next rescan looks again
	}
	src := filepath.Join(dir, name)
	data, _, err := fsx.ReadRegular(src, taskfile.MaxTaskSize)
	if errors.Is(err, os.ErrNotExist) {
		return IntakeResult{Outcome: Vanished}, nil
	}
	if le := (*fsx.LinkedError)(nil); errors.As(err, &le) && !s.linkedLong(src) {
		// Where moves are link-then-unlink (FUSE, NFS, SMB), another
		// daemon's move of this very drop shows as a second link for a
		// moment: look again at the next rescan, and reject only a link
		// that stays.
		return IntakeResult{Outcome: Vanished}, nil
	}
	if err == nil {
		s.linked.drop(src) // one link now: an earlier sighting was a moment's
	}
	lane := dropLane
	if lane == "" {
		lane = taskfile.KindAPI
	}
	if err != nil {
		return s.reject(src, name, lane, taskfile.Rejectf(taskfile.ClassInvalid, "%v", err))
	}
	t, err := taskfile.DecodeTask(data)
	if err != nil {
		return s.reject(src, name, lane, taskfile.Rejectf(taskfile.ClassInvalid, "%v", err))
	}
	orig := *t
	t.ResetForIntake()
	if t.TaskID == "" {
		t.TaskID = taskfile.TrimTaskExt(name)
	}
	lane, rej := config.ResolveLane(s.Cfg, t, dropLane)
	if rej == nil {
		s.keepSealed(lane, name, data, &orig, t) // the door's token, the files it wrote (owner.go)
	}
	if rej == nil {
		rej = config.Validate(s.Cfg, t, lane)
	}
	if rej == nil {
		rej = s.CheckOutput(t, lane)
	}
	if rej == nil {
		rej = s.CheckAttachments(t, dir)
	}
	if rej == nil {
		rej = chain.Check(t, s.FindTask)
	}
	if rej == nil {
		if where := s.Layout.Locate(lane, t.TaskID); where != "" {
			if where == taskfile.DirPending && s.inFlight(lane, t.TaskID, data) {
				return IntakeResult{Outcome: Vanished}, nil
			}
			rej = duplicateReject(lane, where, t.TaskID)
		}
	}
	if rej != nil {
		return s.reject(src, name, lane, rej)
	}
	t.ModelKind = lane
	t.State = taskfile.StatePending
	t.Attempt = 0
	t.SubmittedAt = now()
	// Move first, then rewrite: the move is what claims the taskId, and a
	// crash between the two leaves a pending file that recovery normalizes.
	// The rewrite's folder sync makes the move durable too; the drop box
	// is synced after it.
	dst := s.Layout.TaskPath(lane, taskfile.DirPending, t.TaskID)
	if err := s.renameNoSync(src, dst); err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return IntakeResult{Outcome: Vanished}, nil
		case errors.Is(err, os.ErrExist):
			if s.inFlight(lane, t.TaskID, data) {
				return IntakeResult{Outcome: Vanished}, nil
			}
			where := s.Layout.Locate(lane, t.TaskID)
			return s.reject(src, name, lane, duplicateReject(lane, where, t.TaskID))
		}
		return IntakeResult{}, fmt.Errorf("intake %s: %w", src, err)
	}
	if _, err := s.rewrite(lane, taskfile.DirPending, t, dir); err != nil {
		return IntakeResult{}, fmt.Errorf("intake %s: %w", src, err)
	}
	return IntakeResult{Outcome: Accepted, Lane: lane, Task: t, Path: dst}, nil
}

// inFlight reports whether pending/ID holds exactly the drop's bytes, not
// yet normalized: another daemon's intake of this very drop, mid-move.
// Where RENAME_NOREPLACE is missing (FUSE, NFS) a move is link-then-unlink,
// so for a moment the drop and pending/ID are two names of one file.
// Rejecting it as a duplicate then moves the drop to failed/, and the other
// daemon's move, finding its source gone, undoes itself: the only copy
// would be a false "duplicate" in failed/. Leave it; if the other intake
// fails, the next rescan sees the drop again.
func (s *Store) inFlight(lane taskfile.Kind, id string, drop []byte) bool {
	data, _, err := fsx.ReadOwn(s.Layout.TaskPath(lane, taskfile.DirPending, id), taskfile.MaxTaskSize)
	return err == nil && bytes.Equal(data, drop)
}

func duplicateReject(lane taskfile.Kind, where, id string) *taskfile.RejectError {
	if where == "" {
		where = taskfile.DirPending
	}
	hint := ""
	if where == taskfile.DirFailed || where == taskfile.DirCanceled {
		hint = fmt.Sprintf(": run `spoolgate retry %s` to run it again", id)
	}
	return taskfile.Rejectf(taskfile.ClassDuplicate, "taskId: %q already exists in %s/%s/%s", id, lane, where, hint)
}

// reject moves the drop to the lane's failed/ under a name no other file
// has, with its bytes untouched, and writes the reason beside it.
func (s *Store) reject(src, name string, lane taskfile.Kind, rej *taskfile.RejectError) (IntakeResult, error) {
	failed := s.Layout.Lane(lane, taskfile.DirFailed)
	base, ext := taskfile.TrimTaskExt(name), strings.TrimPrefix(name, taskfile.TrimTaskExt(name))
	var dst, errPath string
	for n := 1; ; n++ {
		b := rejectBase(base, ext, n)
		dst, errPath = filepath.Join(failed, b+ext), filepath.Join(failed, taskfile.ReasonFileName(b))
		if exists(dst) || exists(errPath) {
			continue
		}
		err := s.files.RenameNoReplace(src, dst)
		if err == nil {
			break
		}
		if errors.Is(err, os.ErrNotExist) {
			return IntakeResult{Outcome: Vanished}, nil
		}
		if !errors.Is(err, os.ErrExist) || n > 1000 {
			return IntakeResult{}, fmt.Errorf("reject %s: %w", src, err)
		}
		// Another rejection took the name meanwhile: try the next.
	}
	line := rej.Msg + "\n"
	if err := s.files.WriteAtomic(errPath, []byte(line)); err != nil {
		return IntakeResult{}, fmt.Errorf("reject %s: write reason: %w", src, err)
	}
	s.watchRejected(dst, errPath, filepath.Dir(src), name)
	return IntakeResult{Outcome: Rejected, Lane: lane, Reason: rej.Msg, Path: dst}, nil
}

// maxNameBytes is the longest file name the file systems spoolgate runs on
// take (ext4, XFS, NTFS, SMB: 255 bytes, or 255 UTF-16 units).
const maxNameBytes = 255

// rejectBase is the base name of the n-th candidate for a rejected drop
// in failed/: base itself (with ~n past the first), or, where base with
// its extension or its reason file's would not fit in a file name (a drop
// named near 255 bytes), base cut at a character boundary with ~ and 8 hex
// digits of its SHA-256, so that the drop and its reason file still pair
// (NAME.yaml beside NAME.error) and two long names that share a start do
// not clash.
func rejectBase(base, ext string, n int) string {
	suffix := ""
	if n > 1 {
		suffix = fmt.Sprintf("~%d", n)
	}
	longest := max(len(ext), len(taskfile.ReasonFileName("")))
	if len(base)+len(suffix)+longest <= maxNameBytes {
		return base + suffix
	}
	sum := sha256.Sum256([]byte(base))
	tag := "~" + hex.EncodeToString(sum[:4])
	keep := maxNameBytes - longest - len(suffix) - len(tag)
	for keep > 0 && !utf8.RuneStart(base[keep]) {
		keep--
	}
	return base[:keep] + tag + suffix
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// linkedLong reports whether path has been seen with more than one hard
// link, without a break, for longer than settle. Without a break: every
// look at a drop (each rescan at least) finds it linked again, so a
// sighting older than two rescans belongs to an earlier file of that name
// (a drop moved on by another daemon's link-then-unlink move, then a
// retry's move back, which links again for a moment) and starts anew.
func (s *Store) linkedLong(path string) bool {
	now := time.Now()
	if !s.linked.lasted(path, now, s.Cfg.Settle.D(), 2*s.Cfg.Rescan.D()+s.Cfg.Settle.D()) {
		return false
	}
	s.linked.drop(path)
	return true
}

// linkSightings remembers, per drop, when it was first and last seen with
// more than one hard link.
type linkSightings struct {
	mu sync.Mutex
	m  map[string][2]time.Time // first, last
}

// lasted records a sighting of key at now and reports whether key has been
// seen for at least d with no gap between sightings longer than gap.
func (l *linkSightings) lasted(key string, now time.Time, d, gap time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string][2]time.Time{}
	}
	for k, e := range l.m { // few entries: a sighting is a moment's state
		if now.Sub(e[1]) > time.Hour {
			delete(l.m, k)
		}
	}
	e, ok := l.m[key]
	if !ok || now.Sub(e[1]) > gap {
		l.m[key] = [2]time.Time{now, now}
		return false
	}
	l.m[key] = [2]time.Time{e[0], now}
	return now.Sub(e[0]) >= d
}

// drop forgets key.
func (l *linkSightings) drop(key string) {
	l.mu.Lock()
	delete(l.m, key)
	l.mu.Unlock()
}

// Two daemon-written fields of a task outlive intake: the front door's
// token that submitted it (Task.DoorToken: a token sees and acts on its
// own tasks only) and the files it wrote under output/ (Task.Wrote: only
// its own retry may replace them). Intake clears every daemon field of a
// drop, since anyone on the share can write one; these two come back only
// when the drop is a record this installation sealed under its name and
// lane: the door's own drops, and a failed or canceled record that retry
// moved back to incoming/. A colleague's drop, or a sealed record edited
// or renamed, keeps neither.

// keepSealed restores orig's DoorToken and Wrote onto t (orig reset for
// intake) when data, read from the file name of lane k, carries this
// installation's seal for that name.
func (s *Store) keepSealed(k taskfile.Kind, name string, data []byte, orig, t *taskfile.Task) {
	if orig.DoorToken == "" && len(orig.Wrote) == 0 {
		return
	}
	if _, err := s.key().Open(sealTaskKind(k), filepath.Base(name), data); err != nil {
		return
	}
	t.DoorToken, t.Wrote = orig.DoorToken, append([]taskfile.Written(nil), orig.Wrote...)
}

// ErrBadDrop: a drop that does not decode as a task.
var ErrBadDrop = errors.New("not a task file")

// ReadDrop reads the drop at path (lane k's incoming/, or a rejected drop
// in its failed/) as intake takes it: the submitter's fields, and the
// door token and written files when the drop is sealed (keepSealed). A
// drop that does not decode is an error matching ErrBadDrop; one that
// cannot be read, its read's error (fs.ErrNotExist when it is gone).
func (s *Store) ReadDrop(k taskfile.Kind, path string) (*taskfile.Task, error) {
	data, _, err := fsx.ReadRegular(path, taskfile.MaxTaskSize)
	if err != nil {
		return nil, err
	}
	t, err := taskfile.DecodeTask(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadDrop, err)
	}
	orig := *t
	t.ResetForIntake()
	s.keepSealed(k, path, data, &orig, t)
	return t, nil
}

// FindTask is the chain.Finder of the spool: id's record and state in
// either lane's task folders, read as a daemon reads them (a planted
// record comes back without its daemon-written fields; a rejected drop is
// no task), or else a drop named ID.yaml or ID.yml not yet taken in, in
// any incoming/, as pending. The lanes are looked at again after the
// drops: another daemon's intake may move the drop between the looks.
func (s *Store) FindTask(id string) (*taskfile.Task, taskfile.State, bool) {
	if !taskfile.ValidTaskID(id) {
		return nil, "", false
	}
	if t, st, ok := s.findAccepted(id); ok {
		return t, st, true
	}
	dirs := []string{s.Layout.Incoming()}
	for _, k := range taskfile.Kinds {
		dirs = append(dirs, s.Layout.Lane(k, taskfile.DirIncoming))
	}
	for _, d := range dirs {
		for _, ext := range []string{".yaml", ".yml"} {
			data, _, err := fsx.ReadRegular(filepath.Join(d, id+ext), taskfile.MaxTaskSize)
			if err != nil {
				continue
			}
			if t, err := taskfile.DecodeTask(data); err == nil {
				return t, taskfile.StatePending, true
			}
		}
	}
	return s.findAccepted(id)
}

// findAccepted is FindTask in the lanes' task folders.
func (s *Store) findAccepted(id string) (*taskfile.Task, taskfile.State, bool) {
	k, where := s.Layout.LocateAny(id)
	if where == "" || s.Layout.IsRejectedDrop(k, where, id) {
		return nil, "", false
	}
	t, err := s.Read(k, where, id)
	if err != nil {
		return nil, "", false
	}
	return t, taskfile.FolderState[where], true
}

package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// PausesLog is the lane's record of ended pauses, <lane>/pauses.log: one
// line per pause that `spoolgate resume` ended, "START END FILE NOTE"
// (RFC 3339 UTC, the switch file's name, the note it held). The timeline
// shades them; a pause file removed by hand leaves no line.
const PausesLog = "pauses.log"

// maxPausesRead is how much of the end of pauses.log the timeline reads:
// the latest few thousand pauses, whatever the file has grown to.
const maxPausesRead = 256 << 10

// PauseSpan is one pause of a lane: ended (End set) or still on.
type PauseSpan struct {
	Start, End time.Time
	File       string // paused or paused.HOST
	Note       string
}

// PauseStart is when the pause file at path began: the time its note
// names ("paused by HOST at TIME", as `spoolgate pause` writes), else its
// mtime. ok is false when there is no pause file (or not a regular one).
func PauseStart(path string) (start time.Time, note string, ok bool) {
	data, fi, err := fsx.ReadOwn(path, 4<<10)
	if err != nil || fi == nil {
		return time.Time{}, "", false
	}
	note = taskfile.OneLine(string(data))
	if i := strings.LastIndex(note, " at "); i >= 0 {
		if t, err := time.Parse(time.RFC3339, note[i+4:]); err == nil {
			return t, note, true
		}
	}
	return fi.ModTime(), note, true
}

// RecordResume appends the pause that the switch file at path held, from
// its start to now, to its lane's pauses.log: called just before the file
// is removed. No pause file, nothing recorded.
func RecordResume(path string, now time.Time) error {
	start, note, ok := PauseStart(path)
	if !ok {
		return nil
	}
	line := fmt.Sprintf("%s %s %s %s\n", start.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), filepath.Base(path), note)
	f, err := fsx.OpenAppend(filepath.Join(filepath.Dir(path), PausesLog))
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(line))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Pauses lists lane k's pauses that overlap [from, ∞): the ended ones of
// pauses.log, then those on now (paused, paused.HOST for any host), End
// zero.
func (s *Store) Pauses(k taskfile.Kind, from time.Time) []PauseSpan {
	var out []PauseSpan
	lane := filepath.Join(s.Layout.Root, string(k))
	if data, _, err := ReadTail(filepath.Join(lane, PausesLog), maxPausesRead); err == nil {
		for _, line := range bytes.Split(data, []byte("\n")) {
			f := strings.SplitN(string(line), " ", 4)
			if len(f) < 3 {
				continue
			}
			start, err1 := time.Parse(time.RFC3339, f[0])
			end, err2 := time.Parse(time.RFC3339, f[1])
			if err1 != nil || err2 != nil || end.Before(from) {
				continue
			}
			p := PauseSpan{Start: start, End: end, File: f[2]}
			if len(f) == 4 {
				p.Note = f[3]
			}
			out = append(out, p)
		}
	}
	names, err := fsx.ReadDirNames(lane)
	if err != nil {
		return out
	}
	for _, n := range names {
		if n != taskfile.PausedFile && !strings.HasPrefix(n, taskfile.PausedFile+".") {
			continue
		}
		if start, note, ok := PauseStart(filepath.Join(lane, n)); ok {
			out = append(out, PauseSpan{Start: start, File: n, Note: note})
		}
	}
	return out
}

// ReadTail reads at most the last limit bytes of the regular file at path
// (never following a link, never blocking on a fifo), from the start of a
// line.
func ReadTail(path string, limit int64) ([]byte, os.FileInfo, error) {
	f, err := fsx.OpenNoFollow(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi, &fsx.NotRegularError{Path: path, Kind: fsx.KindOf(fi.Mode()), Want: fsx.WantFile}
	}
	off := max(fi.Size()-limit, 0)
	buf := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fi, err
	}
	buf = buf[:n]
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return buf, fi, nil
}

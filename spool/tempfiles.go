package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Temp files are named .sg-<host>-<pid>-<seq>.tmp: <host> is the first 8 hex
// digits of SHA-256 of the config's `host` (the identity `owner` uses), so a
// name stays short (at most 41 bytes, whatever the folder's file names) and
// says which machine's process wrote it. A temp of this host whose process
// is gone is a crash's leftover and is removed at once; one of another host
// is removed once it is older than staleAfter (a live writer renames its
// temp within milliseconds). Names of older versions (.sg-NAME.PID.SEQ.tmp)
// are treated as another host's.

var tmpSeq atomic.Uint64

// hostTag is the short form of a host name in temp names.
func hostTag(host string) string {
	sum := sha256.Sum256([]byte(host))
	return hex.EncodeToString(sum[:4])
}

// tempName returns a fresh temp file name in the same folder as dst, so
// the final rename stays inside one file system.
func tempName(dst, tag string) string {
	return filepath.Join(filepath.Dir(dst), TempFileName(tag, os.Getpid(), tmpSeq.Add(1)))
}

// TempFileName is the name of temp file seq of process pid on the host
// whose tag is tag (see HostTempTag).
func TempFileName(tag string, pid int, seq uint64) string {
	return tmpPrefix + tag + "-" + strconv.Itoa(pid) + "-" + strconv.FormatUint(seq, 36) + ".tmp"
}

// HostTempTag is the tag of host in temp file names.
func HostTempTag(host string) string { return hostTag(host) }

// tempInfo is what a temp file's name says of its writer.
type tempInfo struct {
	tag    string // "" for the older format
	pid    int
	legacy bool
}

// parseTemp reads a temp name of either format; ok is false for names that
// are not spoolgate's.
func parseTemp(name string) (tempInfo, bool) {
	if !IsOwnTemp(name) {
		return tempInfo{}, false
	}
	core := strings.TrimSuffix(strings.TrimPrefix(name, tmpPrefix), ".tmp")
	if f := strings.Split(core, "-"); len(f) == 3 && len(f[0]) == 8 && isHex(f[0]) {
		pid, err := strconv.Atoi(f[1])
		if _, serr := strconv.ParseUint(f[2], 36, 64); err == nil && serr == nil && pid > 0 {
			return tempInfo{tag: f[0], pid: pid}, true
		}
	}
	// Older format: .sg-<name>.<pid>.<seq>.tmp
	f := strings.Split(core, ".")
	if len(f) >= 3 {
		pid, err := strconv.Atoi(f[len(f)-2])
		if _, serr := strconv.ParseUint(f[len(f)-1], 10, 64); err == nil && serr == nil && pid > 0 {
			return tempInfo{pid: pid, legacy: true}, true
		}
	}
	return tempInfo{}, false
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// tempLeftover says why the temp file name (modified at mtime) is a
// leftover to remove now, or "" to leave it: a temp of this host whose
// process is gone; one of this very process older than staleAfter (a
// previous life with the same pid, as in a container); one of another host
// (or of the older format) older than staleAfter. In a drop box
// (incoming/) only names in the current format count: a user's own
// temp file there is never touched.
func tempLeftover(name, own string, mtime, now time.Time, staleAfter time.Duration, dropBox bool) string {
	ti, ok := parseTemp(name)
	if !ok || dropBox && ti.legacy {
		return ""
	}
	old := now.Sub(mtime) > staleAfter
	switch {
	case ti.legacy:
		if old {
			return "older than staleAfter, from an older version"
		}
	case ti.tag == own && ti.pid == os.Getpid():
		if old {
			return "older than staleAfter, from an earlier process with this pid"
		}
	case ti.tag == own:
		if ProcessGone(ti.pid) {
			return "its process (pid " + strconv.Itoa(ti.pid) + " on this host) is gone"
		}
	default:
		if old {
			return "older than staleAfter, from another host"
		}
	}
	return ""
}

// CleanTemps removes spoolgate's leftover temp files from every folder of
// the spool (output/ and notify/ with their subfolders included), by tempLeftover's rule,
// and returns how many it removed. Start-up runs it, and the daemon's
// periodic upkeep (Maintain) every staleAfter/2 after the last sweep:
// recovery's sweep counts, so the first rescan does not list every
// folder (100,000 pending names) a second time.
func (s *Store) CleanTemps() int {
	now := time.Now()
	s.guard.mu.Lock()
	s.guard.lastSweep = now
	s.guard.mu.Unlock()
	n := 0
	for _, dir := range append(s.Layout.Folders(), s.notifyDir()) {
		n += s.cleanTempsIn(dir, now, isDropBox(dir), 0)
	}
	return n
}

// notifyDir holds the notifications' markers (lanes/notify), written
// with WriteFileNew: its temp files are swept too, in every subfolder.
func (s *Store) notifyDir() string { return filepath.Join(s.Layout.Root, "notify") }

func isDropBox(dir string) bool { return filepath.Base(dir) == taskfile.DirIncoming }

func (s *Store) cleanTempsIn(dir string, now time.Time, dropBox bool, depth int) int {
	f, err := openDirNoFollow(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	recurse := depth < 32 && (strings.HasPrefix(dir, s.Layout.Output()) || strings.HasPrefix(dir, s.notifyDir()))
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			name := e.Name()
			if recurse && e.IsDir() {
				n += s.cleanTempsIn(filepath.Join(dir, name), now, false, depth+1)
				continue
			}
			if !IsOwnTemp(name) || !e.Type().IsRegular() {
				continue // no path built: pending/ may hold 100,000 names
			}
			p := filepath.Join(dir, name)
			if s.files.spares.isSpare(p) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			why := tempLeftover(name, s.files.tag, fi.ModTime(), now, s.Cfg.StaleAfter.D(), dropBox)
			if why == "" {
				continue
			}
			if err := os.Remove(p); err == nil {
				n++
				s.Log.Info("removed leftover temp file", "path", p, "why", why)
			} else if !errors.Is(err, os.ErrNotExist) {
				s.Limiter().Fail("temp:"+p, "leftover temp file not removed", err, "path", p)
			}
		}
		if err != nil {
			return n
		}
	}
}

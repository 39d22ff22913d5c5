package fsx

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
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

// HostTag is the short form of a host name in temp names.
func HostTag(host string) string {
	sum := sha256.Sum256([]byte(host))
	return hex.EncodeToString(sum[:4])
}

// TempName returns a fresh temp file name in the same folder as dst, so
// the final rename stays inside one file system.
func TempName(dst, tag string) string {
	return filepath.Join(filepath.Dir(dst), TempFileName(tag, os.Getpid(), tmpSeq.Add(1)))
}

// TempFileName is the name of temp file seq of process pid on the host
// whose tag is tag (see HostTempTag).
func TempFileName(tag string, pid int, seq uint64) string {
	return tmpPrefix + tag + "-" + strconv.Itoa(pid) + "-" + strconv.FormatUint(seq, 36) + ".tmp"
}

// HostTempTag is the tag of host in temp file names.
func HostTempTag(host string) string { return HostTag(host) }

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

// TempLeftover says why the temp file name (modified at mtime) is a
// leftover to remove now, or "" to leave it: a temp of this host whose
// process is gone; one of this very process older than staleAfter (a
// previous life with the same pid, as in a container); one of another host
// (or of the older format) older than staleAfter. In a drop box
// (incoming/) only names in the current format count: a user's own
// temp file there is never touched.
func TempLeftover(name, own string, mtime, now time.Time, staleAfter time.Duration, dropBox bool) string {
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

package lanes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/spoolgate/spoolgate/spool"
)

// Owner returns the `owner` value of this process: host:pid.
func Owner(host string) string { return host + ":" + strconv.Itoa(os.Getpid()) }

// splitOwner parses host:pid.
func splitOwner(o string) (host string, pid int) {
	i := strings.LastIndexByte(o, ':')
	if i < 0 {
		return o, 0
	}
	pid, _ = strconv.Atoi(o[i+1:])
	return o[:i], pid
}

// pidAlive reports whether pid is a live process on this machine.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	ok, err := process.PidExists(int32(pid))
	return err != nil || ok // when unsure, assume alive: never steal a live task
}

// orphanReason says why a running task whose runner is not in this process
// must be reclaimed, or "" if it must be left alone: its owner is this host
// and that process is dead (or is us, restarted with the same pid), or its
// heartbeat is older than staleAfter.
func (l *Lane) orphanReason(t *spool.Task, now time.Time) string {
	if t.Owner == "" {
		// Moved into running/ but not yet rewritten: a claim in progress
		// (perhaps another daemon's), or one a crash cut short. Its times
		// say nothing, so judge by how long we have watched it so.
		first, ok := l.suspects[t.TaskID]
		if !ok {
			l.suspects[t.TaskID] = now
			return ""
		}
		if now.Sub(first) > l.cfg.StaleAfter.D() {
			return fmt.Sprintf("claimed but not marked running for over %s", l.cfg.StaleAfter.D())
		}
		return ""
	}
	host, pid := splitOwner(t.Owner)
	if host == l.cfg.Host {
		if pid == os.Getpid() {
			return fmt.Sprintf("owner %s is this daemon, which does not run it (restarted with the same pid)", t.Owner)
		}
		if !pidAlive(pid) {
			return fmt.Sprintf("owner %s is no longer running", t.Owner)
		}
	}
	hb := t.HeartbeatAt
	if hb.IsZero() {
		hb = t.StartedAt
	}
	if age := now.Sub(hb); age > l.cfg.StaleAfter.D() {
		return fmt.Sprintf("heartbeat %s old, over staleAfter %s (owner %s)", age.Round(time.Second), l.cfg.StaleAfter.D(), t.Owner)
	}
	return ""
}

// reclaim lists running/ and decides each task that no runner of ours
// holds: finishes a crash's half-done move, or reclaims a stale or orphaned
// attempt (retry if attempts remain, else failed as stale).
func (l *Lane) reclaim(ctx context.Context) {
	dir := l.store.L.Lane(l.kind, spool.DirRunning)
	ents, err := os.ReadDir(dir)
	if err != nil {
		l.log.Error("reclaim: list running", "err", err)
		return
	}
	now := time.Now()
	seen := map[string]bool{}
	defer func() {
		for id := range l.suspects {
			if !seen[id] {
				delete(l.suspects, id)
			}
		}
	}()
	for _, e := range ents {
		name := e.Name()
		if !spool.IsTaskFileName(name) {
			continue
		}
		id := spool.TrimTaskExt(name)
		seen[id] = true
		l.mu.Lock()
		_, mine := l.running[id]
		l.mu.Unlock()
		if mine {
			continue
		}
		t, err := l.store.Read(l.kind, spool.DirRunning, id)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				l.log.Error("reclaim: unreadable running task", "taskId", id, "err", err)
			}
			continue
		}
		reason := l.orphanReason(t, now)
		if reason == "" {
			continue
		}
		switch {
		case t.State.Final():
			// A crash between the final write and the move: complete it.
			if err := l.store.Move(l.kind, spool.DirRunning, spool.StateFolder(t.State), id); err == nil {
				TaskLogger(l.log, l.store, l.kind, id).Info("completed a final move left by a crash", "state", t.State)
			}
		case t.State == spool.StatePending:
			if err := l.store.Move(l.kind, spool.DirRunning, spool.DirPending, id); err == nil {
				l.Requeue(t)
			}
		default:
			l.reclaimOne(t, reason)
		}
	}
}

// reclaimOne takes a stale attempt over: the move out of running/ is what
// only one reclaimer wins; the rewrite follows in the new folder. The old
// owner, if it wakes, finds the file gone and writes nothing.
func (l *Lane) reclaimOne(t *spool.Task, reason string) {
	log := TaskLogger(l.log, l.store, l.kind, t.TaskID)
	to := spool.DirFailed
	if t.Attempt < l.cfg.MaxAttempts() {
		to = spool.DirPending
	}
	if err := l.store.Move(l.kind, spool.DirRunning, to, t.TaskID); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.Error("reclaim failed", "err", err)
		}
		return
	}
	now := time.Now()
	t.Error, t.ErrorClass = "stale: "+reason, spool.ClassStale
	t.Owner, t.BrowserPID = "", 0
	if to == spool.DirPending {
		t.State = spool.StatePending
		t.NotBefore = now.Add(min(l.cfg.RetryBackoff.D(), l.cfg.StaleAfter.D()))
	} else {
		t.State, t.FinishedAt = spool.StateFailed, now
	}
	if err := l.store.Rewrite(l.kind, to, t); err != nil {
		log.Error("reclaim: rewrite failed; recovery will repair the state", "err", err)
	}
	log.Warn("reclaimed", "reason", reason, "attempt", t.Attempt, "now", t.State)
	if to == spool.DirPending {
		l.Requeue(t)
	}
	if l.hooks.OnReclaim != nil {
		l.hooks.OnReclaim(l.kind, t)
	}
}

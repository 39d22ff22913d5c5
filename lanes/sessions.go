package lanes

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A session is one account on one site in one browser profile: it runs
// exactly one task at a time. The web lane has one per configured account
// (config.Config.WebSessions), each with its own executor, its own lock
// (spool.RunnerLock: an OS file lock and a process-wide mutex) and, on a
// shared spool, the account's lease (spool.AccountLease). The web lane's
// parallelism comes only from having several sessions.
type session struct {
	spec config.WebSession
	exec attempt.Executor
	lock *spool.RunnerLock

	// mu guards the session's state below. A caller that holds the lane's
	// mu takes it after that one, never before.
	mu       sync.Mutex
	lease    *spool.AccountLease // held while the session has work; nil otherwise
	running  string              // the task it runs or claims, "" when free
	standby  bool                // its lock is held by another process here
	holder   string
	leasedBy string // the owner of the account's live lease, when not us
	// leaseForeign names the foreign lease file that blocks the account
	// (for staleAfter at most), when one does.
	leaseForeign string
	loggedOut    bool // its last attempt ended signed out (class account)
	// pacedUntil is when the account's pace lets its next task start, by
	// the rule pacedBy, while the session waits for it (pace.go).
	pacedUntil time.Time
	pacedBy    string
	finished   int
	failed     int
	lastReason string
}

// SessionExecutor builds the executor of one web session (its browser on
// its profile). A lane without one gives every session Options.Executor.
type SessionExecutor func(config.WebSession) attempt.Executor

// newSessions builds the web lane's sessions; a config without web models
// still gets one, on the first session's paths, so the lane holds its lock
// as before.
func newSessions(cfg *config.Config, shared attempt.Executor, per SessionExecutor) []*session {
	specs := cfg.WebSessions()
	if len(specs) == 0 {
		specs = []config.WebSession{{Account: config.DefaultAccount, Profile: filepath.Join(cfg.Web.Profiles, cfg.Web.Instance),
			Lock: config.RunnerLockPath(cfg.Web.Profiles)}}
	}
	out := make([]*session, len(specs))
	for i, sp := range specs {
		ex := shared
		if per != nil {
			ex = per(sp)
		}
		out[i] = &session{spec: sp, exec: ex, lock: spool.OpenRunnerLock(sp.Lock)}
	}
	return out
}

// ensureLocks takes each session's lock that we do not hold yet; a session
// whose lock another process holds stands by. It reports whether any
// session can run.
func (l *Lane) ensureLocks() bool {
	anyHeld := false
	for _, s := range l.sessions {
		s.mu.Lock()
		standby := s.standby
		s.mu.Unlock()
		if !standby && s.lock.Held() {
			anyHeld = true
			continue
		}
		err := s.lock.TryLock(l.cfg().Host)
		s.mu.Lock()
		if err == nil {
			if s.standby {
				l.c.Log.Info("web runner lock taken: leaving standby", "account", s.spec.Account, "lock", s.lock.Path())
			}
			s.standby, s.holder = false, ""
			anyHeld = true
		} else {
			holder := s.lock.Holder()
			if !s.standby || s.holder != holder {
				l.c.Log.Warn("standby: web runner lock held elsewhere", "account", s.spec.Account, "lock", s.lock.Path(), "holder", holder, "err", err)
			}
			s.standby, s.holder = true, holder
		}
		s.mu.Unlock()
	}
	return anyHeld
}

// sessionBlocked says why a session may not take a task now ("" when it
// may): its lock is elsewhere, its account is switched off or held.
func (l *Lane) sessionBlocked(s *session, now time.Time) string {
	s.mu.Lock()
	standby := s.standby
	s.mu.Unlock()
	switch {
	case standby:
		return "standby"
	case s.lock.Borrowed() != "":
		return "signing in" // the console's live view has the session (spool.RunnerLock.Borrow)
	case s.spec.Legacy:
		// Its accounts' switches hold their tasks, not the session; but a
		// signed-out page or a challenge is the profile's, whatever the
		// task's account.
		if h, ok := l.c.Store.AccountHold(s.spec.Account); ok && h.SignIn() {
			why, _ := accountBlocked(l.c.Store, s.spec.Account, now)
			return why
		}
		return ""
	}
	why, _ := accountBlocked(l.c.Store, s.spec.Account, now)
	return why
}

// roundSessions gives each free session the first due pending task it may
// run (its site, its account or unpinned): one pending order, a predicate
// per session over it. A session takes its account's lease before it
// claims, and lets it go when it has nothing to do. The legacy session
// (see config.WebSession.Legacy) takes what the lane's eligible accepts:
// tasks whose account is not switched off or held.
//
// gate is the chains' rule (chain.go): a task whose parents have not all
// ended waits, and a follow-up goes to the session of its chat's account.
func (l *Lane) roundSessions(ctx context.Context, eligible func(Entry) bool, gate func(Entry, string) bool) time.Time {
	var wake time.Time
	for _, s := range l.sessions {
		if l.isDraining() {
			return time.Time{}
		}
		now := time.Now()
		s.mu.Lock()
		busy := s.running != ""
		s.mu.Unlock()
		if busy {
			continue
		}
		if why := l.sessionBlocked(s, now); why != "" {
			l.sessionIdle(s, why, now)
			continue
		}
		// One mechanism with the API lane's quotas (Admission): the first
		// due task of the one pending order that this worker may run.
		spec := s.spec
		// legacy: its accounts' switches and holds, and the lane's Admission
		may := func(e Entry) bool { return gate(e, spec.Account) && eligible(e) }
		if !spec.Legacy {
			adm := l.c.Admission
			may = affine(spec.Account, func(e Entry) bool {
				return spec.May(e.Site, e.Pinned) && gate(e, spec.Account) && (adm == nil || adm.Admit(e, now))
			}, now, &wake)
		}
		entries, w := l.c.Index.Next(now, 1, may)
		if !w.IsZero() && (wake.IsZero() || w.Before(wake)) {
			wake = w
		}
		if len(entries) == 0 {
			l.sessionIdle(s, "", now)
			continue
		}
		if until := l.sessionPaced(s, now); !until.IsZero() {
			if wake.IsZero() || until.Before(wake) {
				wake = until
			}
			continue
		}
		if !l.takeLease(s, now) {
			continue
		}
		l.claim(ctx, entries[0], s)
	}
	return wake
}

// sessionIdle records why a session idles and lets its lease go: another
// host may use the account meanwhile. A session that merely has nothing
// to do (why "", also a paced wait) keeps its warm browser: the browser
// is this host's, runs nothing without the lease, and closes by itself
// after web.warm.idle; one that gives the account up for a reason (off,
// held, signing in, standby) lets it go too.
func (l *Lane) sessionIdle(s *session, why string, now time.Time) {
	s.mu.Lock()
	changed := s.lastReason != why
	s.lastReason = why
	lease := s.lease
	s.lease = nil
	s.mu.Unlock()
	if changed && why != "" && why != "standby" {
		// Its pinned tasks wait; unpinned ones go to the other sessions.
		l.holdOnce("account " + s.spec.Account + " " + why + ": its tasks wait")
	}
	if why != "" {
		s.releaseExec(false) // the warm browser goes with the account
	}
	if lease != nil {
		if err := lease.Release(now); err != nil {
			l.c.Store.Limiter().Fail("account lease release:"+s.spec.Account, "account lease release", err, "account", s.spec.Account)
		}
	}
}

// takeLease takes (or renews) the session's account lease; a session whose
// account another owner holds idles.
func (l *Lane) takeLease(s *session, now time.Time) bool {
	s.mu.Lock()
	held := s.lease
	s.mu.Unlock()
	if held != nil && now.Sub(held.Info().Renewed) < l.timing().Heartbeat {
		// Renewed within a heartbeat: nobody may take it before staleAfter
		// (at least two heartbeats), so the next claim needs no write.
		return true
	}
	lease, err := l.c.Store.AcquireAccount(s.spec.Account, l.c.Owner, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		var le *spool.LeasedError
		by, foreign := "?", ""
		if errors.As(err, &le) {
			by, foreign = le.Info.Owner, le.Info.Foreign
			if foreign != "" {
				by = le.Info.By()
			}
		} else {
			// Once per cause, then counted: a lease that fails the same
			// way at every round must not flood the log.
			l.c.Store.Limiter().Fail("account lease:"+s.spec.Account, "account lease", err, "account", s.spec.Account)
		}
		if s.leasedBy != by {
			what := "account leased by another host: its session idles"
			if foreign != "" {
				what = "account blocked by a foreign lease file (for staleAfter at most): its session idles"
			}
			l.c.Log.Info(what, "account", s.spec.Account, "holder", by)
		}
		if s.leasedBy != by {
			s.releaseExec(false) // the account went elsewhere: so does its warm browser
		}
		s.leasedBy, s.leaseForeign, s.lease = by, foreign, nil
		return false
	}
	l.c.Store.Limiter().OK("account lease:" + s.spec.Account)
	if s.leasedBy != "" {
		l.c.Log.Info("account lease taken", "account", s.spec.Account, "gen", lease.Info().Gen)
	}
	s.leasedBy, s.leaseForeign, s.lease, s.lastReason = "", "", lease, ""
	return true
}

// releaseSessions unlocks every session and lets every lease go (Stop).
func (l *Lane) releaseSessions() {
	for _, s := range l.sessions {
		s.mu.Lock()
		lease := s.lease
		s.lease = nil
		s.mu.Unlock()
		s.releaseExec(true) // Stop returns once the session's browser is gone
		if lease != nil {
			_ = lease.Release(time.Now())
		}
		_ = s.lock.Unlock()
	}
}

// sessionEnded counts a session's attempt by the state it wrote.
func (l *Lane) sessionEnded(s *session, t *taskfile.Task, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch t.State {
	case taskfile.StateSuccess:
		s.finished++
	case taskfile.StateFailed:
		s.failed++
	}
	// Signed out: an account failure that is not a usage limit (a limit
	// holds the account instead, and the session shows held).
	s.loggedOut = err != nil && attempt.Classify(err) == taskfile.ClassAccount && attempt.HoldOf(err) == nil && t.State != taskfile.StateSuccess
}

// sessionInfos is the live view of each session, for status.
func (l *Lane) sessionInfos(now time.Time) []taskfile.SessionInfo {
	out := make([]taskfile.SessionInfo, 0, len(l.sessions))
	for _, s := range l.sessions {
		s.mu.Lock()
		si := taskfile.SessionInfo{Account: s.spec.Account, Site: s.spec.Site, Profile: s.spec.Profile, Lock: s.spec.Lock,
			Task: s.running, Finished: s.finished, Failed: s.failed}
		switch {
		case s.running != "":
			si.State = taskfile.SessionRunning
		case s.standby:
			si.State, si.Holder = taskfile.SessionStandby, s.holder
		case s.leaseForeign != "":
			si.State, si.Holder = taskfile.SessionBlocked, s.leaseForeign
		case s.leasedBy != "":
			si.State, si.Holder = taskfile.SessionLeased, s.leasedBy
		case s.lastReason == "disabled":
			si.State = taskfile.SessionDisabled
		case s.lastReason == "held":
			si.State = taskfile.SessionHeld
		case s.lastReason == "signed out":
			si.State = taskfile.SessionSignedOut
		case s.lastReason == "challenge":
			si.State = taskfile.SessionChallenge
		case s.lastReason == "paused":
			si.State = taskfile.SessionPaused
		case s.loggedOut:
			si.State = taskfile.SessionLoggedOut
		default:
			si.State = taskfile.SessionIdle
		}
		if s.lease != nil {
			si.Holder = l.c.Owner
		}
		if si.State == taskfile.SessionIdle && s.pacedUntil.After(now) {
			si.PacedUntil, si.PacedBy = s.pacedUntil, s.pacedBy
		}
		s.mu.Unlock()
		out = append(out, si)
	}
	return out
}

// sessionFree frees session s, which ran task id, for its next claim
// before its runner has recorded id's outcome (see runner.run), and asks
// for a round.
func (l *Lane) sessionFree(s *session, id string) {
	s.mu.Lock()
	if s.running == id {
		s.running = ""
	}
	s.mu.Unlock()
	l.Wake()
}

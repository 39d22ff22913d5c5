package status

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// lane builds one lane's view and the batches' shares of it.
func (s *Snapshotter) lane(k taskfile.Kind, ts []*task, rejected int, now time.Time, live map[taskfile.Kind]taskfile.LaneInfo, disabled map[string]bool, holds map[string]taskfile.Hold) (Lane, map[string]*BatchLane) {
	cfg := s.cfg
	ln := Lane{Lane: string(k), Rejected: rejected, Running: []Running{}, Held: []Held{}}
	ln.Concurrency = config.Concurrency(cfg, k)
	if k == taskfile.KindWeb {
		var li *taskfile.LaneInfo
		if v, ok := live[k]; ok {
			li = &v
		}
		// The web lane runs one task per session that can run.
		var runnable int
		ln.Sessions, runnable = s.sessions(ts, now, li, disabled)
		if len(ln.Sessions) > 0 {
			ln.RunnableSessions = &runnable
		}
	}
	ln.Paused = s.store.Paused(k)
	quota := live[k].Quota // the running daemon's 429 pauses, by model
	ln.Incoming = countDrops(s.store.Layout.Lane(k, taskfile.DirIncoming))

	shares := map[string]*BatchLane{}
	share := func(b string) *BatchLane {
		if b == "" {
			return nil
		}
		bl := shares[b]
		if bl == nil {
			bl = &BatchLane{Lane: string(k)}
			shares[b] = bl
		}
		return bl
	}

	typ := &newest{n: medianWindow} // the latest timed successes, for the ETA
	var pending []summary
	var running []summary
	heldAccount := map[string]int{}
	heldBatch := map[string]string{} // batch -> why it cannot be estimated
	var deferred int
	var chains chainWaits
	var until time.Time
	recent := map[string]*newest{} // the latest web answers in done/ by model
	// Backwards: a folder is listed in name order, and names most often
	// grow with time (ids with dates or sequence numbers), so the newest
	// answers come first and the bounded heaps of the latest (typ,
	// recent) turn the rest away at one comparison each; the differing
	// tasks named are then the latest.
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		ln.Counts.add(t.dir)
		if m := t.sum.resultMethod; m != "" && t.dir == taskfile.DirDone {
			if ln.ResultMethods == nil {
				ln.ResultMethods = map[string]int{}
			}
			ln.ResultMethods[m]++
		}
		if t.sum.resultMethod != "" && t.dir == taskfile.DirDone {
			w := recent[t.sum.model]
			if w == nil {
				w = &newest{n: maxFallingBack}
				recent[t.sum.model] = w
			}
			w.add(&t.sum)
		}
		bl := share(t.sum.batch)
		if t.dir == taskfile.DirDone && !t.sum.usage.IsZero() {
			price := s.priceOf(t.sum.model)
			ln.Tokens.Add(t.sum.usage, price)
			ln.addModelTokens(s.cfg, t.sum.model, t.sum.usage, price)
			if bl != nil {
				bl.Tokens.Add(t.sum.usage, price)
			}
		}
		if t.sum.reasoning && t.dir == taskfile.DirDone {
			ln.Reasoning++
		}
		if c := t.sum.resultCheck; c != "" && t.dir == taskfile.DirDone {
			if ln.ResultChecks == nil {
				ln.ResultChecks = map[string]int{}
			}
			ln.ResultChecks[c]++
			if c == "differs" && len(ln.Differs) < maxDiffers {
				ln.Differs = append(ln.Differs, t.sum.id)
			}
		}
		if bl != nil {
			bl.Counts.add(t.dir)
		}
		switch t.dir {
		case taskfile.DirDone:
			if timed(&t.sum) {
				typ.add(&t.sum)
			}
		case taskfile.DirRunning:
			running = append(running, t.sum)
		case taskfile.DirPending:
			off := func(a string) bool { return s.disabledAccount(a, disabled) }
			if acct, held := s.heldBy(t.sum.model, off); held {
				heldAccount[acct]++
				if t.sum.batch != "" {
					heldBatch[t.sum.batch] = "tasks wait on disabled account " + acct
				}
				ln.addWait(t.sum.id, Wait{Kind: HeldAccount, Account: acct, Hold: HoldDisabled})
				continue
			}
			// Every account it may run on is off or held, some by a limit.
			if acct, held := s.heldBy(t.sum.model, func(a string) bool { return off(a) || holds[a].Account != "" }); held {
				heldAccount[acct]++
				if t.sum.batch != "" {
					heldBatch[t.sum.batch] = "tasks wait on account " + acct + ", held"
				}
				ln.addWait(t.sum.id, accountWait(acct, off, holds))
				continue
			}
			if q, ok := quota[t.sum.model]; ok && q.After(now) {
				ln.addWait(t.sum.id, Wait{Kind: HeldQuota, Model: t.sum.model, Until: ptr(q)})
			}
			if len(t.sum.after) > 0 {
				chains = s.chainHeld(chains, t.sum)
			}
			if t.sum.notBefore.After(now) {
				ln.addWait(t.sum.id, Wait{Kind: HeldDeferred, Until: ptr(t.sum.notBefore)})
				deferred++
				if until.IsZero() || t.sum.notBefore.Before(until) {
					until = t.sum.notBefore
				}
			}
			pending = append(pending, t.sum)
		}
	}
	ln.Progress = progressOf(ln.Counts)
	ln.FallingBack = fallingBack(recent)

	// Running tasks.
	sort.Slice(running, func(i, j int) bool {
		if !running[i].startedAt.Equal(running[j].startedAt) {
			return running[i].startedAt.Before(running[j].startedAt)
		}
		return running[i].id < running[j].id
	})
	for _, r := range running {
		rt := Running{TaskID: r.id, Model: r.model, Batch: r.batch, Attempt: r.attempt, Owner: r.owner, StartedAt: r.startedAt}
		if !r.startedAt.IsZero() {
			rt.ElapsedSeconds = secs(max(now.Sub(r.startedAt), 0))
		}
		if !r.heartbeatAt.IsZero() {
			rt.HeartbeatAt = ptr(r.heartbeatAt)
		}
		age, stale := taskfile.Stale(taskfile.Summary{HeartbeatAt: r.heartbeatAt, StartedAt: r.startedAt}, now, cfg.Timing().StaleAfter)
		rt.HeartbeatAgeSeconds, rt.Stale = secs(age), stale
		if n := len(r.attempts); n > 0 && r.attempts[n-1].N == r.attempt {
			rt.Delivery, rt.Conversation = string(r.attempts[n-1].Delivery), r.attempts[n-1].Conversation
		}
		ln.Running = append(ln.Running, rt)
	}

	// Held reasons. <lane>/paused holds the lane on every host;
	// <lane>/paused.HOST on that host alone (shared spools), which this
	// view names whichever host reads it.
	if on, _ := fsx.SwitchOn(s.store.Layout.Paused(k)); on {
		ln.Held = append(ln.Held, Held{Kind: HeldPaused, Count: ln.Counts.Pending,
			Message: fmt.Sprintf("lane paused: claims nothing new (spoolgate resume %s)", k)})
	}
	for _, host := range pausedHosts(s.store.Layout.Lane(k, "")) {
		ln.Held = append(ln.Held, Held{Kind: HeldPaused, Host: host,
			Message: fmt.Sprintf("lane paused on host %s (spoolgate resume %s --host %s)", host, k, safetext.ShellArg(host))})
	}
	accts := make([]string, 0, len(heldAccount))
	for a := range heldAccount {
		accts = append(accts, a)
	}
	sort.Strings(accts)
	for _, a := range accts {
		if h, ok := holds[a]; ok && !s.disabledAccount(a, disabled) {
			hd := Held{Kind: HeldAccount, Account: a, Count: heldAccount[a], Reason: h.Reason, Hold: cmp.Or(h.Kind, HoldLimit)}
			switch {
			case h.Err != "":
				hd.Hold, hd.Reason = "unreadable", h.Err
				hd.Message = fmt.Sprintf("%s: account %s is held: %s (spoolgate resume --account %s)", wait(heldAccount[a]), a, h.Reason, a)
			case h.Kind == taskfile.HoldPaused:
				hd.Message = fmt.Sprintf("%s: account %s is %s: %s (spoolgate resume --account %s)", wait(heldAccount[a]), a, h.What(), h.Reason, a)
			case h.SignIn():
				hd.Site = h.Site
				shot := ""
				if h.Screenshot != "" {
					shot = "; screenshot " + h.Screenshot
				}
				hd.Message = fmt.Sprintf("%s: account %s is %s: %s%s (sign in: spoolgate login %s --account %s; or spoolgate resume --account %s)", wait(heldAccount[a]), a, h.What(), h.Reason, shot, h.Site, a, a)
			default:
				hd.Until = ptr(h.Until)
				hd.Message = fmt.Sprintf("%s: account %s is held by a usage limit until %s: %q (spoolgate resume --account %s)", wait(heldAccount[a]), a, h.Until.Format(time.RFC3339), h.Reason, a)
			}
			ln.Held = append(ln.Held, hd)
			continue
		}
		ln.Held = append(ln.Held, Held{Kind: HeldAccount, Account: a, Count: heldAccount[a], Hold: HoldDisabled,
			Message: fmt.Sprintf("%s: %s", wait(heldAccount[a]), disabledText(a))})
	}
	if k == taskfile.KindWeb {
		ln.Held = append(ln.Held, s.pacedHeld(&ln, ts, now)...)
		pid, host := s.runner()
		if pid != 0 {
			ln.Runner = fmt.Sprintf("pid %d on %s", pid, host)
		}
		if li, ok := live[k]; ok && li.Standby {
			h := Held{Kind: HeldStandby, Message: "this daemon is in standby: another process runs the web lane"}
			if li.Holder != "" {
				h.Message = "this daemon is in standby behind " + li.Holder
				h.Holder = li.Holder
			}
			h.PID, h.Host = pid, host
			ln.Held = append(ln.Held, h)
		} else if n := waitingSince(pending, now.Add(-runnerGrace)); pid != 0 && !ln.Paused && len(running) == 0 && n > 0 {
			ln.Held = append(ln.Held, Held{Kind: HeldRunner, PID: pid, Host: host, Count: n,
				Message: fmt.Sprintf("%s: the web runner lock is held by pid %d on %s, which runs no task (a login session?)", wait(n), pid, host)})
		}
	}
	ln.Held = append(ln.Held, chains.held()...)
	if deferred > 0 {
		ln.Held = append(ln.Held, Held{Kind: HeldDeferred, Count: deferred, Until: ptr(until),
			Message: fmt.Sprintf("%s deferred until %s (retry back-off)", plural(deferred, "task"), until.Format(time.RFC3339))})
	}

	// ETA.
	typical, samples := typicalDuration(k, typ)
	ln.ETA = ETA{TypicalSeconds: secs(typical), Samples: samples}
	slots := ln.Concurrency
	if ln.RunnableSessions != nil {
		slots = max(1, *ln.RunnableSessions)
	}
	finish := simulate(now, slots, typical, s.cfg.AgingAfter.D(), running, pending)
	batchEnd := map[string]time.Duration{}
	var end time.Duration
	ends := make([]taskEnd, len(finish))
	for i, f := range finish {
		end = max(end, f)
		var b, id string
		if i < len(running) {
			b, id = running[i].batch, running[i].id
		} else {
			b, id = pending[i-len(running)].batch, pending[i-len(running)].id
		}
		if b != "" {
			batchEnd[b] = max(batchEnd[b], f)
		}
		ends[i] = taskEnd{batch: b, id: id, at: now.Add(f)}
	}
	ln.ends, ln.queued = ends, len(running)
	if ln.Paused && len(running)+len(pending) > 0 {
		ln.ETA.Note = "lane paused"
	} else if ln.RunnableSessions != nil && *ln.RunnableSessions == 0 && len(pending) > 0 {
		ln.ETA.Note = "no web session can run (every account disabled, held or in standby)"
	} else {
		ln.ETA.Seconds = ptr(secs(end))
		ln.ETA.At = ptr(now.Add(end))
		ln.estimated = true
		if n := ln.Counts.Pending - len(pending); n > 0 {
			ln.ETA.Note = fmt.Sprintf("excludes %s held by a disabled account", plural(n, "task"))
			if len(holds) > 0 {
				ln.ETA.Note = fmt.Sprintf("excludes %s of disabled or held accounts", plural(n, "task"))
			}
		}
		if end == 0 && len(running)+len(pending) > 0 {
			ln.ETA.Note = strings.TrimSuffix(OverdueNote+", "+ln.ETA.Note, ", ")
		}
	}
	for b, bl := range shares {
		bl.ETA = ETA{TypicalSeconds: ln.ETA.TypicalSeconds, Samples: samples}
		left := bl.Counts.Pending + bl.Counts.Running
		switch {
		case ln.Paused && left > 0:
			bl.ETA.Note = "lane paused"
		case heldBatch[b] != "":
			bl.ETA.Note = heldBatch[b]
		default:
			bl.ETA.Seconds = ptr(secs(batchEnd[b]))
			bl.ETA.At = ptr(now.Add(batchEnd[b]))
			if batchEnd[b] == 0 && left > 0 {
				bl.ETA.Note = OverdueNote
			}
		}
	}
	return ln, shares
}

// priceOf is model's price, nil when it has none (or is not in the
// config any more).
func (s *Snapshotter) priceOf(model string) *config.Price {
	if m, ok := s.cfg.Model(model); ok {
		return m.Price
	}
	return nil
}

func (s *Snapshotter) account(model string) string {
	if m, ok := s.cfg.Model(model); ok {
		return m.Account
	}
	return ""
}

// holds reads the accounts' hold files once per snapshot: the running
// ones go into st.Accounts and the returned map.
func (s *Snapshotter) holds(st *Status, now time.Time) map[string]taskfile.Hold {
	st.Accounts = []Account{}
	m := map[string]taskfile.Hold{}
	for _, h := range s.store.Holds() {
		if !h.Active(now) {
			continue
		}
		m[h.Account] = h
		a := Account{Account: h.Account, Held: true, Reason: h.Reason, Site: h.Site, Wait: h.Wait, Kind: h.Kind, Screenshot: h.Screenshot}
		switch {
		case h.Err != "":
		case h.SignIn() || h.Kind == taskfile.HoldPaused:
			a.Since = ptr(h.Since)
		default:
			a.Until, a.Since = ptr(h.Until), ptr(h.Since)
		}
		st.Accounts = append(st.Accounts, a)
	}
	return m
}

func (s *Snapshotter) disabledAccount(a string, memo map[string]bool) bool {
	v, ok := memo[a]
	if !ok {
		v = s.store.AccountDisabled(a)
		memo[a] = v
	}
	return v
}

// runner returns who holds the web runner lock, by the lock file's content.
// It never takes the lock. A holder on this host whose process is gone
// (the daemon crashed, so the OS freed the lock but the content stayed)
// counts as no holder.
func (s *Snapshotter) runner() (int, string) {
	pid, host := spool.ReadRunnerLock(config.RunnerLockPath(s.cfg.Web.Profiles))
	if pid <= 0 {
		return 0, ""
	}
	if host == s.cfg.Host && pid != os.Getpid() && fsx.ProcessGone(pid) {
		return 0, ""
	}
	return pid, host
}

// pausedHosts lists the hosts that have a paused.HOST file in a lane folder.
func pausedHosts(laneDir string) []string {
	ents, err := fsx.ReadDir(laneDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if h, ok := strings.CutPrefix(e.Name(), taskfile.PausedFile+"."); ok && h != "" && e.Type().IsRegular() {
			out = append(out, h)
		}
	}
	return out
}

// fallingBack lists the models whose last answers (up to
// maxFallingBack, at least minFallingBack) every one fell back from the
// site's first read method, by model name.
func fallingBack(recent map[string]*newest) []FallingBack {
	var out []FallingBack
	for model, w := range recent {
		ss := w.list()
		if len(ss) < minFallingBack || slices.ContainsFunc(ss, func(s *summary) bool { return s.resultFallback == "" }) {
			continue
		}
		out = append(out, FallingBack{Model: model, Answers: len(ss), Methods: ss[0].resultFallback, Method: ss[0].resultMethod})
	}
	slices.SortFunc(out, func(a, b FallingBack) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// A model is named as falling back when each of its last maxFallingBack
// answers did, and there are at least minFallingBack: one odd page is
// not a broken key.
const (
	maxFallingBack = 5
	minFallingBack = 3
)

// maxDiffers bounds the task ids a lane's status names as differing.
const maxDiffers = 10

// runnerGrace is how long a runnable web task may wait while the runner
// lock's holder runs nothing before status blames the holder: a daemon
// takes a task it was just given within moments, so a task submitted a
// second ago is not a sign of a login session holding the lock.
const runnerGrace = 10 * time.Second

// waitingSince counts the pending tasks runnable since before (submitted,
// and past any retry back-off, before it).
func waitingSince(pending []summary, before time.Time) int {
	n := 0
	for _, p := range pending {
		if p.submittedAt.Before(before) && !p.notBefore.After(before) {
			n++
		}
	}
	return n
}

package status

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// DefaultSince is how far back the status page's timeline looks unless
// asked (?since=).
const DefaultSince = 2 * time.Hour

// TimelineQuery says what a timeline shows.
type TimelineQuery struct {
	// Since is how far back from now it starts; zero: DefaultSince, or
	// with Batch, from the batch's first claim.
	Since  time.Duration
	Batch  string // only this batch's attempts ("" every task's)
	Labels timeline.Labels
	Links  bool // bars link to the task's page, /task/LANE/ID
	Loc    *time.Location
}

// TaskHref is the path of a task's page.
func TaskHref(lane, id string) string { return "/task/" + lane + "/" + url.PathEscape(id) }

// SnapshotTimeline is Snapshot and the timeline of the same reading of
// the spool: every bar comes from the task files' own attempt records
// (taskfile.AttemptRecord), the archive's months included where the span
// reaches into them, so any host reading the share draws the same picture.
func (s *Snapshotter) SnapshotTimeline(now time.Time, q TimelineQuery) (*Status, timeline.Chart, error) {
	st, perLane, err := s.snapshot(now)
	if err != nil {
		return nil, timeline.Chart{}, err
	}
	now = st.Now
	if q.Labels.Outcome == nil {
		q.Labels = timeline.LabelsEN
	}
	from, to := now.Add(-q.Since), now
	if q.Since <= 0 {
		from = now.Add(-DefaultSince)
		if q.Batch != "" {
			from, to = batchSpan(perLane, q.Batch, now)
		}
	}
	if !s.Archive {
		ts := s.readArchiveFrom(from)
		for k, v := range ts {
			perLane[k] = append(perLane[k], v...)
		}
	}
	if q.Since <= 0 && q.Batch == "" {
		from = firstAttemptSince(perLane, from)
	}
	// A margin of a fortieth each side: the first bar and the now-line
	// stand clear of the edges.
	margin := max(to.Sub(from)/40, time.Second)
	if q.Since <= 0 {
		from = from.Add(-margin)
	}
	if q.Batch != "" {
		st.BatchTasks = batchTasks(perLane, q.Batch)
		type queued struct {
			at    time.Time
			place int
		}
		ends := map[string]queued{}
		for _, ln := range st.Lanes {
			for i, e := range ln.ends {
				if e.batch != q.Batch {
					continue
				}
				var v queued
				if ln.estimated {
					v.at = e.at
				}
				if i >= ln.queued {
					v.place = i - ln.queued + 1
				}
				ends[ln.Lane+"/"+e.id] = v
			}
		}
		for i, t := range st.BatchTasks {
			if t.State == taskfile.StatePending || t.State == taskfile.StateRunning {
				v := ends[string(t.Lane)+"/"+t.ID]
				st.BatchTasks[i].ETA, st.BatchTasks[i].Place = v.at, v.place
			}
			if t.State == taskfile.StatePending {
				st.BatchTasks[i].Wait = st.waitOf(string(t.Lane), t.ID)
			}
		}
	}
	c := timeline.Chart{From: from, To: to.Add(margin), Now: now, Loc: q.Loc, Labels: q.Labels}
	if c.Loc == nil {
		c.Loc = time.Local
	}
	s.bars(&c, perLane, q)
	return st, c, nil
}

// batchSpan is the span of batch's attempts: its first claim to its last
// end (now while any runs), each clamped to its task's real span
// (clampRecord); an hour to now when it has none yet.
func batchSpan(perLane map[taskfile.Kind][]*task, batch string, now time.Time) (from, to time.Time) {
	for _, ts := range perLane {
		for i := range ts {
			t := ts[i]
			if t.sum.batch != batch {
				continue
			}
			for _, r := range records(t) {
				r = clampRecord(r, t.sum.submittedAt, now)
				if from.IsZero() || r.ClaimedAt.Before(from) {
					from = r.ClaimedAt
				}
				end := r.EndedAt
				if end.IsZero() {
					end = now
				}
				to = latest(to, end)
			}
		}
	}
	if from.IsZero() {
		return now.Add(-time.Hour), now
	}
	return from, to
}

// firstAttemptSince is where the default window starts: the first claim
// of an attempt that runs at or after since (since itself for one that
// began before it), so a batch that started a minute ago fills the
// picture instead of its last pixels; since when there is none.
func firstAttemptSince(perLane map[taskfile.Kind][]*task, since time.Time) time.Time {
	var first time.Time
	for _, ts := range perLane {
		for i := range ts {
			t := ts[i]
			if endedBefore(t, since) {
				continue
			}
			for _, r := range records(t) {
				if !r.EndedAt.IsZero() && r.EndedAt.Before(since) {
					continue
				}
				c := r.ClaimedAt
				if c.IsZero() {
					continue
				}
				if c.Before(since) {
					c = since
				}
				if first.IsZero() || c.Before(first) {
					first = c
				}
			}
		}
	}
	if first.IsZero() {
		return since
	}
	return first
}

// readArchiveFrom reads the archive months that end after from (each
// lane's archive/YYYY-MM/ final folders), through the shared cache, and
// prunes the cache of the archive files it no longer reads.
func (s *Snapshotter) readArchiveFrom(from time.Time) map[taskfile.Kind][]*task {
	out := map[taskfile.Kind][]*task{}
	visited := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range taskfile.Kinds {
		for _, m := range s.store.Layout.ArchiveMonths(k) {
			month, err := time.Parse("2006-01", filepath.Base(m))
			if err == nil && !month.AddDate(0, 1, 1).After(from) {
				continue // ended before the span (a day's slack for time zones)
			}
			for _, dir := range taskfile.FinalDirs {
				ts, _, err := s.readPath(k, dir, filepath.Join(m, dir), visited)
				if err == nil {
					out[k] = append(out[k], ts...)
				}
			}
		}
	}
	if s.archiveCached || len(visited) > 0 { // a day without archive skips the walk
		s.pruneFolders(visited, true)
	}
	s.archiveCached = len(visited) > 0
	return out
}

// inArchive reports whether the cached path p is a file of an archive.
func (s *Snapshotter) inArchive(p string) bool {
	for _, k := range taskfile.Kinds {
		if strings.HasPrefix(p, s.store.Layout.Archive(k)+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// records are a task's attempts as its file records them; a file from
// before attempts were recorded gives one, from its startedAt.
func records(t *task) []taskfile.AttemptRecord {
	if len(t.sum.attempts) > 0 || t.sum.startedAt.IsZero() {
		return t.sum.attempts
	}
	r := taskfile.AttemptRecord{N: t.sum.attempt, ClaimedAt: t.sum.startedAt, StartedAt: t.sum.startedAt, Account: t.sum.account}
	if t.dir != taskfile.DirRunning {
		r.EndedAt, r.Outcome = t.sum.finishedAt, LastOutcome(t.dir)
		if r.EndedAt.IsZero() {
			r.EndedAt = t.sum.heartbeatAt
		}
		if r.EndedAt.IsZero() {
			return nil // nothing says how long it ran
		}
	}
	return []taskfile.AttemptRecord{r}
}

// endedBefore reports, without the allocation of records, that t is a
// task without attempt records, outside running/, whose one bar (or none)
// ends before since: over a year of such files the timeline's window
// skips them at the cost of a comparison.
func endedBefore(t *task, since time.Time) bool {
	if t.dir == taskfile.DirRunning || len(t.sum.attempts) > 0 {
		return false
	}
	return latest(t.sum.finishedAt, t.sum.heartbeatAt).Before(since)
}

// clampRecord holds an attempt's times to what a daemon could have
// written, for the batch's span (batchSpan): not before its task was
// submitted (intake clears the attempts of a retried task), not after now
// (a minute's slack for the clocks of the hosts sharing the spool). A
// planted record (years 1 to 9999) otherwise stretched a batch's timeline
// over ten thousand years, an axis tick a week: a 68 MB page. The bars
// themselves are drawn as recorded, clipped to the plot.
func clampRecord(r taskfile.AttemptRecord, submitted, now time.Time) taskfile.AttemptRecord {
	latest := now.Add(time.Minute)
	hold := func(t *time.Time) {
		switch {
		case t.IsZero():
		case !submitted.IsZero() && t.Before(submitted):
			*t = submitted
		case t.After(latest):
			*t = latest
		}
	}
	hold(&r.ClaimedAt)
	hold(&r.StartedAt)
	hold(&r.EndedAt)
	if !r.HeldUntil.IsZero() && !submitted.IsZero() && r.HeldUntil.Before(submitted) {
		r.HeldUntil = submitted // a hold may end in the future; never before the task
	}
	return r
}

// LastOutcome is the outcome of the last attempt of a task in dir.
func LastOutcome(dir string) string {
	switch dir {
	case taskfile.DirDone:
		return taskfile.AttemptSuccess
	case taskfile.DirFailed:
		return taskfile.AttemptFailed
	case taskfile.DirCanceled:
		return taskfile.AttemptCanceled
	}
	return taskfile.AttemptReturned
}

// bars adds the rows, bars and spans of perLane's attempts in c's span.
func (s *Snapshotter) bars(c *timeline.Chart, perLane map[taskfile.Kind][]*task, q TimelineQuery) {
	sessions := s.cfg.WebSessions()
	defaultAccount := config.DefaultAccount
	if len(sessions) > 0 {
		defaultAccount = sessions[0].Account
	}
	var api []*timeline.Bar
	var web []timeline.Bar
	type apiWait struct {
		b *timeline.Bar
		s timeline.Span
	}
	var apiWaits []apiWait // rowed once the API bars are packed into slots
	accounts := map[string]bool{}
	for _, k := range taskfile.Kinds {
		for i := range perLane[k] {
			t := perLane[k][i]
			if q.Batch != "" && t.sum.batch != q.Batch || endedBefore(t, c.From) {
				continue
			}
			rs := records(t)
			c.LeftOut += t.sum.attemptsLeftOut
			for i, r := range rs {
				b := timeline.Bar{Lane: string(k), Task: t.sum.id, Batch: t.sum.batch, Model: t.sum.model, Attempt: r.N,
					Start: r.ClaimedAt, End: r.EndedAt, Outcome: timeline.Outcome(r.Outcome), Class: string(r.ErrorClass)}
				if b.Start.IsZero() {
					b.Start = r.StartedAt
				}
				if b.End.IsZero() {
					last := i == len(rs)-1
					switch {
					case last && t.dir == taskfile.DirRunning:
						b.Outcome = timeline.Running
					default:
						// Never closed (a crash before its end was written): it
						// ran until the file's last sign of life.
						b.End = latest(t.sum.finishedAt, t.sum.heartbeatAt, b.Start)
						b.Outcome = timeline.Returned
						if last {
							b.Outcome = timeline.Outcome(LastOutcome(t.dir))
						}
					}
				}
				end := b.End
				if end.IsZero() {
					end = c.Now
				}
				if end.Before(c.From) || b.Start.After(c.To) || b.Start.IsZero() {
					continue
				}
				if q.Links {
					b.Href = TaskHref(string(k), t.sum.id)
				}
				// A chained task's wait for its parents, before its
				// first attempt, in the row where that attempt ran.
				var wait *timeline.Span
				if i == 0 && t.sum.parents != "" && !r.ClaimedAt.IsZero() && t.sum.submittedAt.Before(r.ClaimedAt) {
					wait = &timeline.Span{Kind: timeline.Wait, Lane: string(k), Start: t.sum.submittedAt, End: r.ClaimedAt,
						Note: t.sum.id + " ← " + strings.ReplaceAll(t.sum.parents, ",", ", ")}
				}
				if k == taskfile.KindAPI {
					api = append(api, &b)
					if wait != nil {
						apiWaits = append(apiWaits, apiWait{&b, *wait})
					}
					continue
				}
				acct := r.Account
				if acct == "" {
					acct = defaultAccount
				}
				b.Row, accounts[acct] = "web/"+acct, true
				web = append(web, b)
				if wait != nil {
					wait.Row = b.Row
					c.Spans = append(c.Spans, *wait)
				}
				if r.Outcome == taskfile.AttemptHeld && !r.HeldUntil.IsZero() {
					c.Spans = append(c.Spans, timeline.Span{Kind: timeline.Hold, Lane: "web", Row: b.Row, Start: r.EndedAt, End: r.HeldUntil, Note: acct})
				}
			}
		}
	}
	n := timeline.PackSlots(api, c.Now, func(i int) string { return fmt.Sprintf("api/%d", i+1) })
	if q.Batch == "" && s.hasModels(taskfile.KindAPI) {
		n = max(n, config.Concurrency(s.cfg, taskfile.KindAPI))
	}
	for i := range n {
		c.Rows = append(c.Rows, timeline.Row{Key: fmt.Sprintf("api/%d", i+1), Lane: "api", Label: fmt.Sprintf(c.Labels.Slot, i+1)})
	}
	for _, b := range api {
		c.Bars = append(c.Bars, *b)
	}
	for _, w := range apiWaits {
		w.s.Row = w.b.Row
		c.Spans = append(c.Spans, w.s)
	}
	var order []string
	if q.Batch == "" && s.hasModels(taskfile.KindWeb) {
		for _, ws := range sessions {
			order = append(order, ws.Account)
		}
	}
	var extra []string
	for a := range accounts {
		if !slices.Contains(order, a) {
			extra = append(extra, a)
		}
	}
	slices.Sort(extra)
	for _, a := range append(order, extra...) {
		c.Rows = append(c.Rows, timeline.Row{Key: "web/" + a, Lane: "web", Label: a})
	}
	c.Bars = append(c.Bars, web...)
	c.CapRows()
	// The holds on now, from the accounts' hold files (the same hold as an
	// attempt's record is drawn once).
	for _, h := range s.store.Holds() {
		if h.Err != "" || !accounts[h.Account] && !slices.Contains(order, h.Account) {
			continue
		}
		row := "web/" + h.Account
		if !slices.ContainsFunc(c.Spans, func(sp timeline.Span) bool { return sp.Row == row && sp.End.Equal(h.Until) }) {
			c.Spans = append(c.Spans, timeline.Span{Kind: timeline.Hold, Lane: "web", Row: row, Start: h.Since, End: h.Until, Note: h.Reason})
		}
	}
	for _, k := range taskfile.Kinds {
		for _, p := range s.store.Pauses(k, c.From) {
			c.Spans = append(c.Spans, timeline.Span{Kind: timeline.Pause, Lane: string(k), Start: p.Start, End: p.End, Note: p.File + ": " + p.Note})
		}
	}
}

func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// hasModels reports whether the config has a model of lane k.
func (s *Snapshotter) hasModels(k taskfile.Kind) bool {
	for _, m := range s.cfg.Models {
		if m.Kind == k {
			return true
		}
	}
	return false
}

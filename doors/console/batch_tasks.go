package console

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The batch page's task list: every task of the batch by state (?state=
// pending, running, success, failed, canceled; all by default), a page of
// batchPageSize at a time (?page=N), each row named by the first words of
// its content with its id in the link and the tooltip. Pending tasks come
// in the order a lane takes them (priority, then submission) and carry
// their place in it; the others in submission order.

const batchPageSize = 50

// batchTaskRow is one row of the list.
type batchTaskRow struct {
	Order                                  int // place among the batch's pending tasks, from 1; 0 for the others
	Lane, TaskID, Href, Name, Model, State string
	StateWord, When, Reason                string
	Attempt                                int
}

// batchFilter is one of the list's state links.
type batchFilter struct {
	Word, Href string
	N          int
	On         bool
}

type batchTasks struct {
	Filters            []batchFilter
	Rows               []batchTaskRow
	Page, Pages        int
	PageOf             string
	PrevHref, NextHref string
	// SelectAll is this list with every row ticked (?select=all: a
	// selection without scripts); Selected says the rows are.
	SelectAll string
	Selected  bool
}

// taskName is what a list shows for a task: its title, or else the first
// words of its content, on one line, at most 60 characters, ending on a
// whole word.
func taskName(title, content string) string {
	s := safetext.Line(strings.Join(strings.Fields(cmp.Or(title, content)), " "))
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59])
		if i := strings.LastIndexByte(s, ' '); i > 40 {
			s = s[:i] // end on a whole word
		}
		s = strings.TrimSpace(s) + "…"
	}
	return s
}

// batchRows are the snapshot's tasks of a batch as result rows (without
// content or error: detail reads them), with each one's file by lane/id.
func batchRows(ts []status.BatchTask, batch string) ([]report.Row, map[string]string) {
	rows := make([]report.Row, 0, len(ts))
	paths := make(map[string]string, len(ts))
	for _, t := range ts {
		rows = append(rows, report.Row{TaskID: t.ID, Lane: t.Lane, Model: t.Model, Batch: batch, State: string(t.State), Attempt: t.Attempt,
			Priority: t.Priority, SubmittedAt: report.TimeOrNil(t.SubmittedAt), StartedAt: report.TimeOrNil(t.StartedAt), FinishedAt: report.TimeOrNil(t.FinishedAt),
			FollowUp: t.FollowUp})
		paths[string(t.Lane)+"/"+t.ID] = t.Path
	}
	return rows, paths
}

// listBatchTasks fills the list from the batch's rows for the query q;
// detail completes a row it shows (its content and error).
func listBatchTasks(rows []report.Row, detail func(*report.Row), name string, q url.Values, L pageLabels, D detailLabels, now time.Time) batchTasks {
	words := map[string]string{"pending": L.Pending, "running": L.Running, "success": L.Success, "failed": L.Failed, "canceled": L.Canceled}
	states := []string{"pending", "running", "success", "failed", "canceled"}
	want := q.Get("state")
	if !slices.Contains(states, want) {
		want = ""
	}
	// Pending in the lanes' order: a higher priority first, then the
	// earlier submission (rows come sorted by submission).
	var pending []report.Row
	for _, r := range rows {
		if r.State == "pending" {
			pending = append(pending, r)
		}
	}
	slices.SortStableFunc(pending, func(a, b report.Row) int { return cmp.Compare(b.Priority.Level(), a.Priority.Level()) })
	order := map[string]int{}
	for i, r := range pending {
		order[string(r.Lane)+"/"+r.TaskID] = i + 1
	}
	var list []report.Row
	counts := map[string]int{}
	if want == "pending" {
		list = pending
	}
	for _, r := range rows {
		counts[r.State]++
		if want != "pending" && (want == "" || r.State == want) {
			list = append(list, r)
		}
	}
	if want == "" {
		list = turnsTogether(list)
	}
	href := func(state string, page int) string {
		v := url.Values{}
		if state != "" {
			v.Set("state", state)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return batchHref(name) + "#tasks"
		}
		return batchHref(name) + "?" + v.Encode() + "#tasks"
	}
	var bt batchTasks
	bt.Filters = append(bt.Filters, batchFilter{Word: D.All, Href: href("", 1), N: len(rows), On: want == ""})
	for _, s := range states {
		bt.Filters = append(bt.Filters, batchFilter{Word: words[s], Href: href(s, 1), N: counts[s], On: want == s})
	}
	bt.Selected = q.Get("select") == "all"
	sel := url.Values{"select": {"all"}}
	if want != "" {
		sel.Set("state", want)
	}
	if p := q.Get("page"); p != "" {
		sel.Set("page", p)
	}
	bt.SelectAll = batchHref(name) + "?" + sel.Encode() + "#tasks"
	bt.Pages = max(1, (len(list)+batchPageSize-1)/batchPageSize)
	bt.Page, _ = strconv.Atoi(q.Get("page"))
	bt.Page = min(max(bt.Page, 1), bt.Pages)
	bt.PageOf = fmt.Sprintf(D.PageOf, bt.Page, bt.Pages)
	if bt.Page > 1 {
		bt.PrevHref = href(want, bt.Page-1)
	}
	if bt.Page < bt.Pages {
		bt.NextHref = href(want, bt.Page+1)
	}
	lo := (bt.Page - 1) * batchPageSize
	for _, r := range list[lo:min(lo+batchPageSize, len(list))] {
		detail(&r)
		row := batchTaskRow{Order: order[string(r.Lane)+"/"+r.TaskID], Lane: string(r.Lane), TaskID: r.TaskID,
			Href: status.TaskHref(string(r.Lane), r.TaskID), Name: taskName(r.Title, r.Content), Model: r.Model,
			State: r.State, StateWord: cmp.Or(words[r.State], r.State), Attempt: r.Attempt}
		if row.Name == "" {
			row.Name = r.TaskID
		}
		if r.FollowUp != "" {
			row.Name = "↳ " + row.Name // the next turn of the chat above it
		}
		for _, at := range []*time.Time{r.FinishedAt, r.StartedAt, r.SubmittedAt} {
			if at != nil {
				row.When = report.ShortTime(now, *at)
				break
			}
		}
		if r.State == string(taskfile.StateFailed) || r.State == string(taskfile.StateCanceled) {
			row.Reason = safetext.Line(r.Error)
		}
		bt.Rows = append(bt.Rows, row)
	}
	return bt
}

// taskNames names the tasks the status page lists by id (its running and
// failed rows, a few dozen at most) by their title or first words, read
// from their files and kept by (path, size, mtime): the snapshot carries
// no content, and a page over a year of tasks must not read every file.
type taskNames struct {
	mu    sync.Mutex
	known map[string]knownName
}

type knownName struct {
	size  int64
	mtime time.Time
	name  string
}

// namesCap bounds the names kept: past it the cache starts over.
const namesCap = 512

// of is the name of task id of lane in folder dir, "" when its file is
// gone or unreadable (the page then shows the id).
func (n *taskNames) of(l spool.Layout, lane taskfile.Kind, dir, id string) string {
	p := l.TaskPath(lane, dir, id)
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	n.mu.Lock()
	k, ok := n.known[p]
	n.mu.Unlock()
	if ok && k.size == fi.Size() && k.mtime.Equal(fi.ModTime()) {
		return k.name
	}
	data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize)
	if err != nil {
		return ""
	}
	t, err := taskfile.DecodeRecord(data)
	if err != nil {
		return ""
	}
	name := taskName(t.Title, t.Content)
	n.mu.Lock()
	if n.known == nil || len(n.known) >= namesCap {
		n.known = map[string]knownName{}
	}
	n.known[p] = knownName{size: fi.Size(), mtime: fi.ModTime(), name: name}
	n.mu.Unlock()
	return name
}

// statusNames are the names of st's running and failed tasks, by
// "lane/id".
func (h *httpServer) statusNames(st *status.Status) map[string]string {
	out := map[string]string{}
	for _, ln := range st.Lanes {
		for _, r := range ln.Running {
			if n := h.names.of(h.store.Layout, taskfile.Kind(ln.Lane), taskfile.DirRunning, r.TaskID); n != "" {
				out[ln.Lane+"/"+r.TaskID] = n
			}
		}
	}
	for _, f := range st.Failed {
		if n := h.names.of(h.store.Layout, taskfile.Kind(f.Lane), taskfile.DirFailed, f.TaskID); n != "" {
			out[f.Lane+"/"+f.TaskID] = n
		}
	}
	return out
}

// turnsTogether lists each conversation's turns together: a follow-up
// right after the turn it continues (and its own follow-ups after it),
// the rest in the order given. A follow-up whose parent is not in rows
// keeps its place.
func turnsTogether(rows []report.Row) []report.Row {
	in := map[string]bool{}
	for _, r := range rows {
		in[r.TaskID] = true
	}
	next := map[string][]report.Row{}
	var top []report.Row
	for _, r := range rows {
		if r.FollowUp != "" && r.FollowUp != r.TaskID && in[r.FollowUp] {
			next[r.FollowUp] = append(next[r.FollowUp], r)
			continue
		}
		top = append(top, r)
	}
	if len(next) == 0 {
		return rows
	}
	out := make([]report.Row, 0, len(rows))
	seen := map[string]bool{}
	var add func(r report.Row)
	add = func(r report.Row) {
		if seen[r.TaskID] {
			return // a cycle of follow-ups (planted): each once
		}
		seen[r.TaskID] = true
		out = append(out, r)
		for _, f := range next[r.TaskID] {
			add(f)
		}
	}
	for _, r := range top {
		add(r)
	}
	for _, r := range rows { // follow-ups in a cycle, never reached from a top row
		if !seen[r.TaskID] {
			add(r)
		}
	}
	return out
}

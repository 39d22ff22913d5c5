package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The batch page, /batch/NAME: its progress per lane with ETA, its
// timeline, its failed tasks with their reasons, the command that retries
// them, and its results as CSV and JSON Lines downloads
// (?download=csv|jsonl): the same bytes as `spoolgate results --batch
// NAME [--format csv]`.

type batchFailure struct {
	Lane, TaskID, Href, Class, Error, When string
	Attempt                                int
}

type batchView struct {
	L        pageLabels
	D        detailLabels
	Now      time.Time
	Batch    status.Batch
	Name     string
	Timeline template.HTML
	Failures []batchFailure
	Retry    string
	CSV      string
	CSVGB    string // the CSV in GB18030
	XLSX     string
	JSONL    string
	A        actView
	Audit    []auditView
	Tasks    batchTasks
	B        bulkLabels
	Levels   []string
	Refresh  int // live updates' period, s
	Usage    batchUsage
}

var batchTmpl = template.Must(template.New("batch").Funcs(template.FuncMap{
	"eta": func(l pageLabels, now time.Time, e status.ETA) string { return etaText(l, now, e, false) },
	"cls": func(l pageLabels, c string) string { return l.word(classesZH, c) },
	"bar": outcomeBar,
}).Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8">
` + liveHead + `
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.D.BatchPage}} {{.Name}}</title>
<style>` + detailCSS + actCSS + batchCSS + barCSS + `</style></head><body data-live-every="{{.Refresh}}">
` + userBar + `
<nav><a href="/">← {{.D.Back}}</a></nav>
<h1 class="batch-title">{{.D.BatchPage}} <span translate="no">{{.Name}}</span></h1>
<div data-live="progress">{{bar "batch" .Name .Batch.Counts}}<span class="num">{{.Batch.Progress.Finished}}/{{.Batch.Progress.Total}}</span>{{.Batch.Progress.Percent}}% · {{if and .Batch.Counts.Failed (eq .Batch.Progress.Finished .Batch.Progress.Total)}}<span class="failed-num">{{.L.Failed}} {{.Batch.Counts.Failed}}</span>{{else}}{{.D.ETA}} {{eta .L .Now .Batch.ETA}}{{if .Batch.Counts.Failed}} · <span class="failed-num">{{.L.Failed}} {{.Batch.Counts.Failed}}</span>{{end}}{{end}}</div>
<h2>{{.D.Progress}}</h2>
<div data-live="lanes"><table class="lanes"><tr><th>{{.D.Lane}}</th><th>{{.D.Progress}}</th><th>{{.D.ETA}}</th><th>{{.L.Pending}}</th><th>{{.L.Running}}</th><th>{{.L.Success}}</th><th>{{.L.Failed}}</th><th>{{.L.Canceled}}</th></tr>
{{range .Batch.Lanes}}<tr class="batch-lane" data-lane="{{.Lane}}"><td>{{.Lane}}</td><td>{{bar "lane" .Lane .Counts}}<span class="num">{{.Progress.Finished}}/{{.Progress.Total}}</span></td><td>{{eta $.L $.Now .ETA}}</td><td>{{.Counts.Pending}}</td><td>{{.Counts.Running}}</td><td>{{.Counts.Success}}</td><td>{{.Counts.Failed}}</td><td>{{.Counts.Canceled}}</td></tr>
{{end}}</table></div>
` + usageSection + `<h2 id="tasks">{{.D.Tasks}}</h2>
<div class="filters" data-live="filters">{{range .Tasks.Filters}}<a class="filter{{if .On}} on{{end}}" href="{{.Href}}">{{.Word}} <span class="num">{{.N}}</span></a> {{end}}</div>
<div data-live="tasks">{{if .Tasks.Rows}}{{if .A.Operate}}<form method="post" action="/action" id="bulk">` + hiddenCSRF + `<input type="hidden" name="do" value="bulk"><input type="hidden" name="batch" value="{{.Name}}">{{end}}<div class="scroll"><table class="batch-tasks"><tr>{{if .A.Operate}}<th><a href="{{.Tasks.SelectAll}}" id="select-all">{{.B.SelectAll}}</a></th>{{end}}<th title="{{.D.OrderNote}}">{{.D.Order}}</th><th>{{.D.Name}}</th><th>{{.D.Lane}}</th><th>{{.D.Model}}</th><th>{{.L.State}}</th><th>{{.L.Attempts}}</th><th>{{.L.When}}</th><th>{{.D.Reason}}</th></tr>
{{range .Tasks.Rows}}<tr class="batch-task" data-state="{{.State}}" data-id="{{.TaskID}}">{{if $.A.Operate}}<td><input type="checkbox" name="task" value="{{.Lane}}/{{.TaskID}}" aria-labelledby="n-{{.Lane}}-{{.TaskID}}"{{if $.Tasks.Selected}} checked{{end}}></td>{{end}}<td>{{if .Order}}{{.Order}}{{end}}</td><td translate="no"><a href="{{.Href}}" title="{{.Lane}}/{{.TaskID}}" id="n-{{.Lane}}-{{.TaskID}}">{{.Name}}</a></td><td>{{.Lane}}</td><td translate="no">{{.Model}}</td><td><span class="state state-{{.State}}">{{.StateWord}}</span></td><td>{{.Attempt}}</td><td>{{.When}}</td><td translate="no">{{.Reason}}</td></tr>
{{end}}</table></div>
{{if .A.Operate}}<div class="bulk-actions"><button name="op" value="cancel" id="bulk-cancel">{{.B.Cancel}}</button> <button name="op" value="retry" id="bulk-retry">{{.B.Retry}}</button> <select name="level" id="bulk-level" aria-label="{{.A.L.Priority}}">{{range $k := .Levels}}<option value="{{$k}}"{{if eq $k "normal"}} selected{{end}}>{{index $.B.Levels $k}}</option>{{end}}</select> <button name="op" value="priority" id="bulk-priority">{{.B.Priority}}</button></div></form>{{end}}
<div class="pager">{{if .Tasks.PrevHref}}<a href="{{.Tasks.PrevHref}}">{{.D.Prev}}</a> {{end}}<span>{{.Tasks.PageOf}}</span>{{if .Tasks.NextHref}} <a href="{{.Tasks.NextHref}}">{{.D.Next}}</a>{{end}}</div>{{else}}<div class="meta">{{.D.NoTasks}}</div>{{end}}</div>
<h2>{{.D.Timeline}}</h2>
<div data-live="timeline" class="timeline-scroll">{{.Timeline}}</div>
<div data-live="failures"><h2>{{.D.Failures}}</h2>
{{if .Failures}}<table class="failures"><tr><th>{{.D.Task}}</th><th>{{.D.Class}}</th><th>{{.L.Attempts}}</th><th>{{.L.When}}</th><th>{{.D.Reason}}</th></tr>
{{range .Failures}}<tr class="failure"><td translate="no"><a href="{{.Href}}">{{.Lane}}/{{.TaskID}}</a></td><td>{{cls $.L .Class}}</td><td>{{.Attempt}}</td><td>{{.When}}</td><td translate="no">{{.Error}}</td></tr>
{{end}}</table>
<h2>{{.D.Retry}}</h2>
{{if .A.Operate}}<form method="post" action="/action">` + hiddenCSRF + `<input type="hidden" name="do" value="retry-failed"><input type="hidden" name="batch" value="{{.Name}}"><button id="retry-failed">{{.A.L.RetryFailed}} ({{len .Failures}})</button></form>{{end}}
<code class="cmd">{{.Retry}}</code>
<div class="meta">{{.D.RetryNote}}</div>{{else}}<div class="meta">{{.D.NoFailures}}</div>{{end}}</div>
<div data-live="audit">` + auditList + `</div>
<h2>{{.D.Downloads}}</h2>
<div><a href="{{.CSV}}" download>{{.D.CSV}}</a> · <a href="{{.CSVGB}}" download>{{.D.CSVGB}}</a> · <a href="{{.XLSX}}" download>{{.D.XLSX}}</a> · <a href="{{.JSONL}}" download>{{.D.JSONL}}</a></div>
</body></html>
`))

// batchCSS: the task list's filters, states and pager; the table scrolls
// sideways on a narrow screen instead of squeezing its cells.
const batchCSS = `.filters a.filter{margin-right:.6em}.filters a.on{font-weight:bold;text-decoration:none}
.scroll{overflow-x:auto}.batch-tasks td{white-space:nowrap}.batch-tasks td:nth-child(2),.batch-tasks td:last-child{white-space:normal;min-width:12em}
.state-failed{color:#b00020;font-weight:bold}.state-canceled{color:#666}.state-success{color:#1b5e20}.pager{margin:.4em 0}.bulk-actions{margin:.4em 0}`

func (h *httpServer) batchPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" || len(name) > 128 || safetext.Line(name) != name {
		http.NotFound(w, r) // not a batch name spoolgate accepts
		return
	}
	if f := r.URL.Query().Get("download"); f != "" {
		h.batchDownload(w, r, name, f)
		return
	}
	L := labelsFor(r)
	st, c, err := h.snap.SnapshotTimeline(h.now(), status.TimelineQuery{Batch: name, Links: true, Labels: L.timeline()})
	if err != nil {
		h.log.Warn("status snapshot", "err", err)
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	v := batchView{L: L, D: L.detail(), Now: st.Now, Name: name, A: h.actView(r, L), B: L.bulk(), Levels: []string{"high", "normal", "low"}, Refresh: batchRefresh}
	v.Audit = h.auditLines(v.A.L, st.Now, "", name, v.A.User != "")
	found := false
	for _, b := range st.Batches {
		if b.Batch == name {
			v.Batch, found = b, true
		}
	}
	// The batch's tasks as the snapshot read them (no second pass over the
	// spool); each shown row and each failure is read in full below. A
	// batch the snapshot did not see (wholly in an old archive month) is
	// read as `spoolgate results` reads it.
	rows, paths := batchRows(st.BatchTasks, name)
	if len(rows) == 0 {
		var err error
		if rows, err = report.ReadResults(h.cfg, name, true); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	accounts := map[string]string{} // the account a shown running task runs on
	detail := func(row *report.Row) {
		p, ok := paths[string(row.Lane)+"/"+row.TaskID]
		if !ok {
			return // read in full already
		}
		t, err := spool.ReadTaskFile(p)
		if err != nil {
			row.Error = err.Error()
			return
		}
		row.Content, row.Title, row.Error, row.ErrorClass = t.Content, t.Title, t.Error, string(t.ErrorClass)
		if row.State == string(taskfile.StateRunning) && t.Account != "" {
			accounts[string(row.Lane)+"/"+row.TaskID] = t.Account
		}
	}
	if !found && len(rows) == 0 {
		http.NotFound(w, r)
		return
	}
	var svg bytes.Buffer
	if err := timeline.Render(&svg, c); err != nil {
		http.Error(w, "timeline", http.StatusInternalServerError)
		return
	}
	v.Timeline = template.HTML(svg.String()) //nolint:gosec // escaped by timeline.Render
	for _, row := range rows {
		if row.State != string(taskfile.StateFailed) {
			continue
		}
		detail(&row)
		f := batchFailure{Lane: string(row.Lane), TaskID: row.TaskID, Href: status.TaskHref(string(row.Lane), row.TaskID),
			Class: row.ErrorClass, Error: safetext.Line(row.Error), Attempt: row.Attempt}
		if row.FinishedAt != nil {
			f.When = report.ShortTime(st.Now, *row.FinishedAt)
		}
		v.Failures = append(v.Failures, f)
	}
	v.Usage = batchUsageOf(st.BatchTasks, h.cfg, L.Lang)
	v.Tasks = listBatchTasks(rows, detail, name, r.URL.Query(), L, v.D, st.Now)
	// When a pending or running task should end, by its lane's ETA
	// simulation, and why a pending one waits besides the tasks ahead of
	// it: its parents, its lane paused, its accounts held or paced, a
	// retry's back-off, its model's quota.
	type queued struct {
		eta, started time.Time
		wait         *status.Wait
		after        []string
	}
	byTask := map[string]queued{}
	for _, t := range st.BatchTasks {
		if t.State == taskfile.StatePending || t.State == taskfile.StateRunning {
			byTask[string(t.Lane)+"/"+t.ID] = queued{eta: t.ETA, started: t.StartedAt, wait: t.Wait, after: t.Waits}
		}
	}
	for i, row := range v.Tasks.Rows {
		q, ok := byTask[row.Lane+"/"+row.TaskID]
		if !ok || row.Reason != "" {
			continue
		}
		var why []string
		if row.State == "running" && !q.started.IsZero() {
			why = append(why, v.L.Elapsed+" "+report.Dur(max(st.Now.Sub(q.started), 0).Seconds()))
		}
		if a := accounts[row.Lane+"/"+row.TaskID]; a != "" {
			why = append(why, v.D.Account+" "+safetext.Line(a))
		}
		if row.State == "pending" && len(q.after) > 0 {
			why = append(why, fmt.Sprintf(v.D.WaitParents, safetext.Line(strings.Join(q.after, ", "))))
		}
		if row.State == "pending" && q.wait != nil {
			why = append(why, waitText(L, st.Now, q.wait))
		}
		if !q.eta.IsZero() && (row.State != "pending" || len(q.after) == 0) {
			// A chained task's ETA would count on its parents' ends,
			// which the lane's simulation does not know: none is shown.
			why = append(why, v.D.ETA+" "+report.ShortTime(st.Now, q.eta))
		}
		v.Tasks.Rows[i].Reason = strings.Join(why, " · ")
	}
	v.Retry = "spoolgate retry --batch " + shellQuote(name) + " --failed"
	dl := batchHref(name) + "?download="
	v.CSV, v.CSVGB, v.XLSX, v.JSONL = dl+"csv", dl+"csv&encoding=gb18030", dl+"xlsx", dl+"jsonl"
	var buf bytes.Buffer
	if err := batchTmpl.Execute(&buf, &v); err != nil {
		h.log.Error("batch page", "err", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	writePage(w, buf.Bytes(), formCSP)
}

// batchDownload sends the batch's results as `spoolgate results --batch
// NAME` writes them, as a file to save: csv (UTF-8 with a byte order
// mark, or GB18030 with ?encoding=gb18030), xlsx or jsonl.
func (h *httpServer) batchDownload(w http.ResponseWriter, r *http.Request, name, format string) {
	enc := r.URL.Query().Get("encoding")
	if format != "csv" && format != "jsonl" && format != "xlsx" || enc != "" && (format != "csv" || enc != "gb18030" && enc != "utf-8") {
		http.Error(w, "download: csv (encoding utf-8 or gb18030), xlsx or jsonl", http.StatusBadRequest)
		return
	}
	rows, err := report.ReadResults(h.cfg, name, true)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if len(rows) == 0 {
		http.NotFound(w, r)
		return
	}
	var buf bytes.Buffer
	ctype := "application/x-ndjson"
	switch {
	case format == "csv" && enc == "gb18030":
		ctype = "text/csv; charset=gb18030"
		err = report.WriteResultsGB18030CSV(&buf, rows, true)
	case format == "csv":
		// The byte order mark tells Excel the file is UTF-8: without it,
		// Excel in a Chinese locale reads it as GB18030 and garbles it.
		ctype = "text/csv; charset=utf-8"
		buf.WriteString(utf8BOM)
		err = report.WriteResultsCSV(&buf, rows, true)
	case format == "xlsx":
		ctype = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
		err = report.WriteResultsXLSX(&buf, rows, true)
	default:
		err = report.WriteResultsJSONL(&buf, rows)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", attachment("results-"+name+"."+format))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

const utf8BOM = "\ufeff"

// batchRefresh is the batch page's live-update period in seconds: it
// reads more than the status page, and changes as slowly.
const batchRefresh = 5

// attachment is a Content-Disposition that saves the download as name:
// the name itself for every browser of today (RFC 6266's filename*, UTF-8,
// so a Chinese batch name stays readable), an ASCII stand-in for the rest.
func attachment(name string) string {
	return `attachment; filename="` + asciiName(name) + `"; filename*=UTF-8''` + url.PathEscape(name)
}

// shellQuote quotes s for a POSIX shell: one argument, nothing expanded.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/+=:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package console

import (
	"cmp"
	"html/template"
	"net/http"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// pageRefresh is how often the status page reloads itself.
const pageRefresh = 2 * time.Second

// The page is self-contained (no scripts, fonts or styles from elsewhere)
// and updates itself (console.js, livejs.go; a meta refresh without
// scripts), so it works on a closed network and in any browser. Each bar carries its numbers in data-finished and
// data-total, and shows them as "finished/total".
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"dur":          report.Dur,
	"taskHref":     status.TaskHref,
	"shotHref":     taskfile.ShotHref,
	"batchHref":    batchHref,
	"bar":          outcomeBar,
	"sessionState": func(l pageLabels, st *status.Status, s status.Session) string { return sessionText(l, st.Now, s) },
	"eta":          func(l pageLabels, st *status.Status, e status.ETA) string { return etaText(l, st.Now, e, false) },
	"etab":         func(l pageLabels, st *status.Status, e status.ETA) string { return etaText(l, st.Now, e, true) },
	"cls":          func(l pageLabels, c string) string { return l.word(classesZH, c) },
	"held": func(l pageLabels, st *status.Status, lane string, h status.Held) template.HTML {
		return heldHTML(l, st.Now, lane, h)
	},
	"when": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") },
	"short": func(st *status.Status, t any) string {
		switch v := t.(type) {
		case time.Time:
			return report.ShortTime(st.Now, v)
		case *time.Time:
			return report.ShortTime(st.Now, *v)
		}
		return ""
	},
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05 MST")
	},
}).Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8">
` + liveHead + `
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.L.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:82em}
a{color:#1d5fb4;text-decoration:none} a:hover{text-decoration:underline}
svg.timeline{max-width:100%;height:auto;display:block;border:1px solid #e3e6ea;border-radius:4px}
.spans a{margin-left:.5em} table.failed-tasks td:first-child, table.runs td:first-child{white-space:nowrap}
h1{font-size:1.3em;margin:0 0 .2em} h2{font-size:1.1em;margin:1.2em 0 .3em}
.meta{color:#666}
.bar{display:inline-block;vertical-align:middle;width:20em;height:1em;background:#e5e5e5;border-radius:3px;overflow:hidden}
.fill{display:block;height:100%;background:#3a7}
` + barCSS + `
.num{margin:0 .6em;font-variant-numeric:tabular-nums}
table{border-collapse:collapse;margin:.3em 0} td,th{padding:.15em .7em .15em 0;text-align:left}
.held{color:#a40} .stale{color:#c00;font-weight:bold} .paused{color:#a40;font-weight:bold}
` + actCSS + `
</style></head><body data-live-every="{{.Refresh}}">
` + userBar + `
<h1>spoolgate</h1>
<div class="meta" data-live="meta" id="live-meta">{{.L.Spool}} <span translate="no">{{.St.Spool}}</span> · <span id="now">{{when .St.Now}}</span> · {{printf .L.Refreshes .Refresh}}</div>
<div data-live="accounts">{{range .St.Accounts}}<div class="held account" data-account="{{.Account}}" data-kind="{{.Kind}}">{{if eq .Kind "signedOut"}}{{$.L.AccountSignedOut}} {{.Account}}{{else if eq .Kind "challenge"}}{{$.L.AccountChallenge}} {{.Account}}{{else if eq .Kind "paused"}}{{$.L.AccountPaused}} {{.Account}}{{else}}{{$.L.AccountHeld}} {{.Account}} · {{$.L.Until}} {{whenp .Until}}{{end}} · <span translate="no">{{.Reason}}</span>{{with shotHref .Screenshot}} · <a class="shot" href="{{.}}">{{$.L.Screenshot}}</a>{{end}}{{if $.A.Admin}} <form class="inline" method="post" action="/action"><input type="hidden" name="csrf" value="{{$.A.CSRF}}"><input type="hidden" name="back" value="/"><input type="hidden" name="do" value="release"><input type="hidden" name="account" value="{{.Account}}"><button class="release">{{$.A.L.Release}}</button></form>{{end}}</div>
{{end}}</div>
<div data-live="timeline">{{if .Timeline}}<section class="timeline-box">
<h2>{{.D.Timeline}} <span class="meta spans">{{.D.Last}} {{.Since}}{{range .Spans}} <a href="?since={{.}}">{{.}}</a>{{end}} <a href="?since=off">{{.D.Hide}}</a></span></h2>
<div class="timeline-scroll">{{.Timeline}}</div>
</section>
{{else}}<div class="meta spans">{{.D.Timeline}}:{{range .Spans}} <a href="?since={{.}}">{{.}}</a>{{end}}</div>
{{end}}</div>{{range .St.Lanes}}{{$lane := .Lane}}
<section class="lane" id="lane-{{.Lane}}">
<h2 data-live="lane-head-{{.Lane}}">{{.Lane}} {{$.L.Lane}} <span class="meta">{{$.L.Concurrency}} {{.Concurrency}}{{if .Runner}} · {{$.L.Runner}} {{.Runner}}{{end}}</span>{{if .Paused}} <span class="paused">{{$.L.Paused}}</span>{{end}}</h2>
{{if $.A.Operate}}<div class="lane-actions"><form class="inline" method="post" action="/action"><input type="hidden" name="csrf" value="{{$.A.CSRF}}"><input type="hidden" name="back" value="/"><input type="hidden" name="lane" value="{{.Lane}}">{{if .Paused}}<button name="do" value="resume" id="resume-{{.Lane}}">{{$.A.L.Resume}}</button>{{else}}<button name="do" value="pause" id="pause-{{.Lane}}">{{$.A.L.Pause}}</button>{{end}}</form>
<form class="inline" method="post" action="/action"><input type="hidden" name="csrf" value="{{$.A.CSRF}}"><input type="hidden" name="back" value="/"><input type="hidden" name="lane" value="{{.Lane}}">{{$.A.L.Host}} <input name="host" size="12" id="host-{{.Lane}}"> <button name="do" value="pause">{{$.A.L.PauseHost}}</button> <button name="do" value="resume">{{$.A.L.ResumeHost}}</button></form></div>{{end}}
<div data-live="lane-{{.Lane}}"><div>{{bar "lane" .Lane .Counts}}<span class="num">{{.Progress.Finished}}/{{.Progress.Total}}</span>{{.Progress.Percent}}%</div>
<div class="eta">{{$.L.ETA}} {{etab $.L $.St .ETA}}</div>
<table class="counts"><tr><th>{{$.L.Pending}}</th><th>{{$.L.Running}}</th><th>{{$.L.Success}}</th><th>{{$.L.Failed}}</th><th>{{$.L.Canceled}}</th><th>{{$.L.Rejected}}</th><th>{{$.L.Incoming}}</th></tr>
<tr><td class="pending">{{.Counts.Pending}}</td><td class="running">{{.Counts.Running}}</td><td class="success">{{.Counts.Success}}</td><td class="failed">{{.Counts.Failed}}</td><td class="canceled">{{.Counts.Canceled}}</td><td class="rejected">{{.Rejected}}</td><td class="incoming">{{.Incoming}}</td></tr></table>
{{with .Tokens}}{{if or .Prompt .Completion .Estimated}}<div class="meta lane-tokens" data-prompt="{{.Prompt}}" data-completion="{{.Completion}}">{{$.U.Tokens}}:{{if or .Prompt .Completion}} {{$.U.Reported}} {{$.U.Prompt}} {{.Prompt}}{{if .Cached}} ({{$.U.Cached}} {{.Cached}}){{end}} · {{$.U.Completion}} {{.Completion}}{{if .Reasoning}} ({{$.U.Reasoning}} {{.Reasoning}}){{end}}{{with .Cost}} · {{$.U.Cost}} {{printf "%.4f" .}}{{end}}{{end}}{{with .Estimated}} · {{$.U.Estimated}} {{$.U.Prompt}} {{.Prompt}} · {{$.U.Completion}} {{.Completion}}{{end}}</div>{{end}}{{end}}
{{if .Running}}<table class="runs"><tr><th>{{$.L.Task}}</th><th>{{$.L.Model}}</th><th>{{$.L.Attempt}}</th><th>{{$.L.Elapsed}}</th><th>{{$.L.Heartbeat}}</th><th>{{$.L.Owner}}</th>{{if $.A.Operate}}<th></th>{{end}}</tr>
{{range .Running}}{{$id := .TaskID}}<tr class="run"><td translate="no"><a href="{{taskHref $lane $id}}"{{with index $.Names (print $lane "/" $id)}} title="{{$lane}}/{{$id}}">{{.}}{{else}}>{{$id}}{{end}}</a></td><td translate="no">{{.Model}}</td><td>{{.Attempt}}</td><td>{{dur .ElapsedSeconds}}</td><td{{if .Stale}} class="stale"{{end}}>{{dur .HeartbeatAgeSeconds}}{{$.L.Ago}}{{if .Stale}} {{$.L.Stale}}{{end}}</td><td translate="no">{{.Owner}}</td>{{if $.A.Operate}}<td><form class="inline" method="post" action="/action"><input type="hidden" name="csrf" value="{{$.A.CSRF}}"><input type="hidden" name="back" value="/"><input type="hidden" name="do" value="bulk"><input type="hidden" name="op" value="cancel"><input type="hidden" name="task" value="{{$lane}}/{{$id}}"><button class="cancel-run" id="cancel-{{$lane}}-{{$id}}">{{$.A.L.Cancel}}</button></form></td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Sessions}}<table class="sessions"><caption>{{$.L.Sessions}}</caption><tr><th>{{$.L.Account}}</th><th>{{$.L.Site}}</th><th>{{$.L.State}}</th><th>{{$.L.Lease}}</th><th>{{$.L.Finished}}</th><th>{{$.L.Failed}}</th></tr>
{{range .Sessions}}<tr class="session" data-account="{{.Account}}" data-state="{{.State}}"><td><span translate="no">{{.Account}}</span>{{if and $.A.Admin .Site}} <a class="live" href="/live/{{.Account}}">{{$.A.L.LiveLink}}</a>{{end}}{{if and $.A.Admin (ne .State "paused") (ne .State "held") (ne .State "disabled")}} <form class="inline" method="post" action="/action"><input type="hidden" name="csrf" value="{{$.A.CSRF}}"><input type="hidden" name="back" value="/"><input type="hidden" name="do" value="pause-account"><input type="hidden" name="account" value="{{.Account}}"><button class="pause-account">{{$.A.L.PauseAccount}}</button></form>{{end}}</td><td translate="no">{{.Site}}</td><td>{{sessionState $.L $.St .}}{{with shotHref .Screenshot}} <a class="shot" href="{{.}}">{{$.L.Screenshot}}</a>{{end}}</td><td translate="no">{{.Lease}}{{.BlockedBy}}</td><td>{{.Finished}}</td><td>{{.Failed}}</td></tr>
{{end}}</table>{{end}}
{{range .Held}}<div class="held" data-kind="{{.Kind}}">{{$.L.Held}}{{held $.L $.St $lane .}}</div>
{{end}}{{if .RejectedDrops}}<table class="rejected-drops"><caption>{{$.L.RejectedDrops}}</caption><tr><th>{{$.L.When}}</th><th>{{$.L.File}}</th><th>{{$.L.Reason}}</th></tr>
{{range .RejectedDrops}}<tr class="rejected-drop"><td>{{short $.St .At}}</td><td translate="no">{{.File}}</td><td translate="no">{{.Reason}}</td></tr>
{{end}}{{if .RejectedMore}}<tr><td colspan="3" class="meta more">{{printf $.L.More .RejectedMore}}</td></tr>{{end}}</table>{{end}}
</div></section>
{{end}}
<div data-live="batches"><h2>{{.L.Batches}}</h2>
{{if not .St.Batches}}<div class="meta">{{.L.NoBatches}}</div>{{end}}
<table class="batches">
{{range .St.Batches}}<tr class="batch"><td translate="no"><a href="{{batchHref .Batch}}">{{.Batch}}</a></td><td>{{bar "batch" .Batch .Counts}}<span class="num">{{.Progress.Finished}}/{{.Progress.Total}}</span></td>
<td>{{$.L.ETA}} {{eta $.L $.St .ETA}}</td><td class="meta">{{range $i, $l := .Lanes}}{{if $i}}, {{end}}{{$l.Lane}} {{$l.Progress.Finished}}/{{$l.Progress.Total}}{{end}} · {{$.L.Failed}} {{.Counts.Failed}}</td></tr>
{{end}}</table>
{{if .St.Failed}}<h2>{{.L.FailedTasks}}</h2>
<table class="failed-tasks"><tr><th>{{.L.TaskCol}}</th><th>{{.L.Batch}}</th><th>{{.L.Class}}</th><th>{{.L.Attempts}}</th><th>{{.L.When}}</th><th>{{.L.Reason}}</th></tr>
{{range .St.Failed}}{{$id := .TaskID}}{{$ln := .Lane}}<tr class="failed-task"><td translate="no"><a href="{{taskHref $ln $id}}"{{with index $.Names (print $ln "/" $id)}} title="{{$ln}}/{{$id}}">{{.}}{{else}}>{{$ln}}/{{$id}}{{end}}</a></td><td translate="no">{{if .Batch}}<a href="{{batchHref .Batch}}">{{.Batch}}</a>{{end}}</td><td>{{cls $.L .ErrorClass}}</td><td>{{.Attempt}}</td><td>{{if .FinishedAt}}{{short $.St .FinishedAt}}{{end}}</td><td translate="no">{{.Error}}</td></tr>
{{end}}{{if .St.FailedMore}}<tr><td colspan="6" class="meta more">{{printf .L.More .St.FailedMore}}</td></tr>{{end}}</table>{{end}}
{{if .St.Foreign}}<h2>{{.L.Foreign}}</h2>
<table class="foreign"><tr><th>{{.L.File}}</th><th>{{.L.Kind}}</th><th>{{.L.Reason}}</th></tr>
{{range .St.Foreign}}<tr class="foreign-file"><td translate="no">{{.File}}</td><td>{{.Kind}}</td><td translate="no">{{.Reason}}</td></tr>
{{end}}{{if .St.ForeignMore}}<tr><td colspan="3" class="meta more">{{printf .L.More .St.ForeignMore}}</td></tr>{{end}}</table>{{end}}
</div></body></html>
`))

func (h *httpServer) page(w http.ResponseWriter, r *http.Request) {
	L := labelsFor(r)
	since, show, ok := sinceParam(r)
	if !ok {
		http.Error(w, "since: a duration such as 30m, 2h, 1d, or off", http.StatusBadRequest)
		return
	}
	st, svg, err := h.snapshotTimeline(show, status.TimelineQuery{Since: since, Links: true, Labels: L.timeline()})
	if err != nil {
		h.log.Warn("status snapshot", "err", err)
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	safetext.Strings(st) // html/template escapes markup, not control or bidi characters
	h.render(w, pageTmpl, &struct {
		St       *status.Status
		Refresh  int
		L        pageLabels
		D        detailLabels
		Timeline template.HTML
		Since    string
		Spans    []string
		A        actView
		U        usageWords
		Names    map[string]string // the running and failed tasks' names, by lane/id
	}{st, int(pageRefresh / time.Second), L, L.detail(), svg, sinceText(cmp.Or(since, status.DefaultSince)), sinceChoices, h.actView(r, L), usageWordsFor(L.Lang), h.statusNames(st)}, http.StatusOK)
}

// detailCSS styles the task and batch pages like the status page.
const detailCSS = `body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#222;max-width:82em}
a{color:#1d5fb4;text-decoration:none} a:hover{text-decoration:underline}
h1{font-size:1.3em;margin:.3em 0} h2{font-size:1.1em;margin:1.3em 0 .4em}
.meta{color:#666} .err{color:#b00;font-weight:600}
table{border-collapse:collapse;margin:.3em 0} td,th{padding:.2em .8em .2em 0;text-align:left;vertical-align:top}
table.fields th{color:#555;font-weight:500;white-space:nowrap} table.failures td:first-child{white-space:nowrap}
table.attempts tr:nth-child(even), table.failures tr:nth-child(even){background:#f6f7f9}
.sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:-1px}
.state{font-size:.75em;padding:.1em .5em;border-radius:3px;background:#e5e5e5;vertical-align:middle}
.s-done{background:#d7f0df} .s-failed{background:#f8d9d8} .s-canceled{background:#e3e5e8} .s-running{background:#dbe7fa}
pre{background:#f6f7f9;border:1px solid #e3e6ea;border-radius:4px;padding:.6em;white-space:pre-wrap;word-break:break-word;max-height:40em;overflow:auto;font-size:13px}
.result{display:flex;gap:1em;align-items:flex-start} .result>div{flex:1;min-width:0}
.md{border:1px solid #e3e6ea;border-radius:4px;padding:0 .8em} .md table td,.md table th{border:1px solid #d5d9de;padding:.2em .5em}
.md pre{max-height:none} .md img{max-width:100%;height:auto}
.shots{display:flex;flex-wrap:wrap;gap:1em} figure.shot{margin:.3em 0;width:26em;max-width:100%} figure.shot img{width:100%;border:1px solid #ccd;border-radius:4px}
.bar{display:inline-block;vertical-align:middle;width:20em;height:1em;background:#e5e5e5;border-radius:3px;overflow:hidden}
.fill{display:block;height:100%;background:#3a7} .num{margin:0 .6em;font-variant-numeric:tabular-nums}
svg.timeline{max-width:100%;height:auto;display:block;border:1px solid #e3e6ea;border-radius:4px}
details.fold>summary{cursor:pointer;color:#1d5fb4;margin:.2em 0}
code.cmd{display:block;background:#f6f7f9;border:1px solid #e3e6ea;padding:.5em;border-radius:4px;user-select:all}`

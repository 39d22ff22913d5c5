package console

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/markdown"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The task page, /task/LANE/ID: the task file's fields, its attempts, its
// prompt and content, its result rendered from Markdown beside its source,
// its log, and a failed web attempt's screenshots; the page the browser
// saved is offered only as a download. Every file is read like every other
// spool file (fsx.ReadOwn, spool.ReadTail: no link followed, no fifo
// waited on, only regular files), and only names built from a valid
// taskId: anything else is a 404.

// maxShot bounds a screenshot served: the browser captures its viewport,
// a few hundred KiB, and a 1920x1080 PNG of pure noise is under 8 MiB. A
// larger "screenshot" was not written by the browser. maxSavedPage bounds
// a saved page (a long conversation's HTML). Both are streamed, never
// held whole: a page view costs a copy buffer, whatever the files.
const (
	maxShot      = 8 << 20
	maxSavedPage = 32 << 20
)

// maxShotAttempts is how many attempts' artefacts the task page lists,
// the last ones: a task retried many times (or a folder of planted names)
// makes no longer page.
const maxShotAttempts = 3

// maxLogShown is how much of the end of a task's log the page shows.
const maxLogShown = 256 << 10

// taskCSP lets the task page show its own screenshots and nothing else.
const taskCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'"

// located is where a task's file is: a lane folder, or a month of the
// lane's archive.
type located struct {
	lane  taskfile.Kind
	dir   string // pending, running, done, failed, canceled
	path  string // the task file
	logs  string // the logs folder beside it
	month string // the archive month, "" for the lane's own folders
}

// locateTask finds lane k's task id, in the lane's folders first, then in
// its archive's months, newest first. ok is false for an invalid lane or
// id, or no such task.
func locateTask(L spool.Layout, lane, id string) (located, bool) {
	k := taskfile.Kind(lane)
	if !k.Valid() || !taskfile.ValidTaskID(id) {
		return located{}, false
	}
	if d := L.Locate(k, id); d != "" {
		return located{lane: k, dir: d, path: L.TaskPath(k, d, id), logs: L.Lane(k, taskfile.DirLogs)}, true
	}
	// Just submitted or retried, not yet taken in by intake.
	if d := spool.LocateIn(L.Lane(k, ""), []string{taskfile.DirIncoming}, id); d != "" {
		return located{lane: k, dir: d, path: L.TaskPath(k, d, id), logs: L.Lane(k, taskfile.DirLogs)}, true
	}
	months := L.ArchiveMonths(k)
	slices.Reverse(months)
	for _, m := range months {
		if d := spool.LocateIn(m, taskfile.FinalDirs, id); d != "" {
			return located{lane: k, dir: d, path: filepath.Join(m, d, id+".yaml"), logs: filepath.Join(m, taskfile.DirLogs), month: filepath.Base(m)}, true
		}
	}
	return located{}, false
}

type field struct {
	K, V, Href string
	Word       bool // V is a word of the page's (a state, a class), not the task's own data
}

type attemptView struct {
	N                             int
	Claimed, Started, Ended, Took string
	Outcome, OutcomeText, Colour  string
	Class, Account, Owner, Method string
	HeldUntil                     string
}

type shotView struct {
	N        string
	Src      string // the screenshot, "" if there is none
	PageHref string // the saved page, "" if there is none
}

type taskView struct {
	L             pageLabels
	D             detailLabels
	Lane, ID, Dir string
	Month         string
	Batch         string
	Priority      string // the task's level (high, normal, low): the priority form starts on it
	ReadErr       string
	Fields        []field
	Attempts      []attemptView
	Prompt        string
	Content       string
	Result        string
	Rendered      template.HTML
	Reasoning     *reasoningView // the thinking, collapsed under the result
	Log           string
	LogCut        string
	Shots         []shotView
	Files         []fileView // the generated files (generated.go)
	A             actView
	Audit         []auditView
	Refresh       int               // live updates' period while the task is pending or running, 0 after
	StateWord     string            // the folder's state in the page's words
	Elapsed       string            // a running task's time since it started
	Levels        map[string]string // the priority levels in the page's words
}

var taskTmpl = template.Must(template.New("task").Funcs(template.FuncMap{"batchHref": batchHref, "fold": fold, "levels": func() []string { return []string{"high", "normal", "low"} }}).Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.D.TaskPage}} {{.Lane}}/{{.ID}}</title>{{if .Refresh}}` + liveHead + `{{end}}
<style>` + detailCSS + actCSS + `</style></head><body{{if .Refresh}} data-live-every="{{.Refresh}}"{{end}}>
` + userBar + `
<nav><a href="/">← {{.D.Back}}</a>{{if .Batch}} · <a href="{{batchHref .Batch}}">{{.D.BatchPage}} {{.Batch}}</a>{{end}}</nav>
<h1 class="task-title" data-live="title"><span translate="no">{{.Lane}}/{{.ID}}</span> <span class="state s-{{.Dir}}" data-state="{{.Dir}}">{{.StateWord}}</span>{{if .Elapsed}} <span class="meta elapsed" id="elapsed">{{.L.Elapsed}} {{.Elapsed}}</span>{{end}}{{if .Month}} <span class="meta">{{.D.Archived}} {{.Month}}</span>{{end}}</h1>
{{if .ReadErr}}<div class="err">{{.ReadErr}}</div>{{end}}
<div data-live="actions">{{if and .A.Operate (not .Month)}}<div class="task-actions">{{if or (eq .Dir "pending") (eq .Dir "running")}}<form class="inline" method="post" action="/action">` + hiddenCSRF + `<input type="hidden" name="do" value="bulk"><input type="hidden" name="op" value="cancel"><input type="hidden" name="task" value="{{.Lane}}/{{.ID}}"><button id="cancel">{{.A.L.Cancel}}</button></form>{{end}}
{{if or (eq .Dir "failed") (eq .Dir "canceled")}}<form class="inline" method="post" action="/action">` + hiddenCSRF + `<input type="hidden" name="do" value="retry"><input type="hidden" name="lane" value="{{.Lane}}"><input type="hidden" name="id" value="{{.ID}}"><button id="retry">{{.A.L.Retry}}</button></form>{{end}}
{{if eq .Dir "pending"}}<form class="inline" method="post" action="/action">` + hiddenCSRF + `<input type="hidden" name="do" value="priority"><input type="hidden" name="lane" value="{{.Lane}}"><input type="hidden" name="id" value="{{.ID}}">{{.A.L.Priority}} <select name="level" id="level">{{range $l := levels}}<option value="{{$l}}"{{if eq $l $.Priority}} selected{{end}}>{{index $.Levels $l}}</option>{{end}}</select> <button id="set-priority">{{.A.L.Set}}</button></form>{{end}}</div>{{end}}</div>
<div data-live="audit">` + auditList + `</div>
<div data-live="body">{{if .Result}}<h2>{{.D.Result}}</h2>
<div class="result"><div class="rendered"><div class="meta">{{.D.Rendered}}</div><div class="md" translate="no">{{.Rendered}}</div></div><div class="source"><div class="meta">{{.D.Source}}</div><pre>{{.Result}}</pre></div></div>{{end}}
{{with .Reasoning}}<details class="reasoning"><summary>{{.Label}}</summary>
<div class="result"><div class="rendered"><div class="md" translate="no">{{.Rendered}}</div></div><div class="source"><pre>{{.Text}}</pre></div></div></details>{{end}}
{{if .Files}}<h2>{{.D.Files}}</h2>
<div class="shots">{{range .Files}}<figure class="shot file">{{if .Image}}<img src="{{.Href}}" alt="{{.Title}}">{{end}}<figcaption translate="no"><a href="{{.Href}}"{{if not .Image}} download{{end}}>{{.Name}}</a> · {{.Type}} · {{.Size}} B{{if .Title}} · {{.Title}}{{end}}</figcaption></figure>
{{end}}</div>{{end}}
{{if .Fields}}<h2>{{.D.Fields}}</h2>
<table class="fields">{{range .Fields}}<tr><th>{{.K}}</th><td{{if not .Word}} translate="no"{{end}}>{{if .Href}}<a href="{{.Href}}">{{.V}}</a>{{else}}{{.V}}{{end}}</td></tr>
{{end}}</table>{{end}}
<h2>{{.D.Attempts}}</h2>
{{if .Attempts}}<table class="attempts"><tr><th>#</th><th>{{.D.Claimed}}</th><th>{{.D.Started}}</th><th>{{.D.Ended}}</th><th>{{.D.Took}}</th><th>{{.D.Outcome}}</th><th>{{.D.Class}}</th><th>{{.D.Account}}</th><th>{{.D.Owner}}</th><th>{{.D.Method}}</th></tr>
{{range .Attempts}}<tr class="attempt" data-outcome="{{.Outcome}}"><td>{{.N}}</td><td>{{.Claimed}}</td><td>{{.Started}}</td><td>{{.Ended}}</td><td>{{.Took}}</td><td><span class="sw" style="background:{{.Colour}}"></span>{{.OutcomeText}}{{if .HeldUntil}} ({{$.D.HeldUntil}} {{.HeldUntil}}){{end}}</td><td>{{.Class}}</td><td translate="no">{{.Account}}</td><td translate="no">{{.Owner}}</td><td translate="no">{{.Method}}</td></tr>
{{end}}</table>{{else}}<div class="meta">{{.D.NoAttempts}}</div>{{end}}
{{if .Shots}}<h2>{{.D.Screenshots}}</h2>
<div class="shots">{{range .Shots}}<figure class="shot">{{if .Src}}<img src="{{.Src}}" alt="{{printf $.D.AttemptN .N}}">{{end}}<figcaption>{{printf $.D.AttemptN .N}}{{if .PageHref}} · <a href="{{.PageHref}}" download>{{$.D.SavedPage}}</a>{{end}}</figcaption></figure>
{{end}}</div>{{end}}
{{if .Prompt}}<h2>{{.D.Prompt}}</h2>{{fold .D "prompt" .Prompt}}{{end}}
{{if .Content}}<h2>{{.D.Content}}</h2>{{fold .D "content" .Content}}{{end}}
<h2>{{.D.Log}}</h2>{{if .LogCut}}<div class="meta">{{.LogCut}}</div>{{end}}
{{if .Log}}{{fold .D "log" .Log}}{{else}}<div class="meta">{{.D.NoLog}}</div>{{end}}</div>
</body></html>
`))

func (h *httpServer) taskPage(w http.ResponseWriter, r *http.Request) {
	lane, id := r.PathValue("lane"), r.PathValue("id")
	loc, ok := locateTask(spool.NewLayout(h.cfg.Spool), lane, id)
	if !ok {
		http.NotFound(w, r)
		return
	}
	L := labelsFor(r)
	v := taskView{L: L, D: L.detail(), Lane: lane, ID: id, Dir: loc.dir, Month: loc.month, A: h.actView(r, L)}
	h.fillTask(&v, loc)
	h.queueFields(&v)
	v.Levels = L.bulk().Levels
	v.StateWord = stateWord(L, string(cmp.Or(taskfile.FolderState[loc.dir], taskfile.State(loc.dir))))
	if loc.dir == taskfile.DirPending || loc.dir == taskfile.DirRunning || loc.dir == taskfile.DirIncoming {
		v.Refresh = int(pageRefresh / time.Second)
	}
	v.Audit = h.auditLines(v.A.L, h.now(), lane+"/"+id, "", v.A.User != "")
	var buf bytes.Buffer
	if err := taskTmpl.Execute(&buf, &v); err != nil {
		h.log.Error("task page", "err", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	writePage(w, buf.Bytes(), taskCSP)
}

// writePage sends a page of spoolgate's own, never cached.
func writePage(w http.ResponseWriter, body []byte, csp string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept-Language")
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Referrer-Policy", "same-origin") // no-referrer would make a form post's Origin "null"; other sites get no referrer
	_, _ = w.Write(body)
}

func (h *httpServer) fillTask(v *taskView, loc located) {
	D := v.D
	if spool.NewLayout(h.cfg.Spool).IsRejectedDrop(loc.lane, loc.dir, v.ID) && loc.month == "" {
		reason, _, _ := fsx.ReadOwn(filepath.Join(filepath.Dir(loc.path), taskfile.ReasonFileName(v.ID)), 64<<10)
		v.ReadErr = D.Rejected + safetext.Line(strings.TrimSpace(string(reason)))
	} else if data, _, err := fsx.ReadOwn(loc.path, taskfile.MaxRecordSize); err != nil {
		// A task's own record (a large answer included) is read up to the
		// limit `results` reads it to.
		v.ReadErr = D.Unreadable + safetext.Line(err.Error())
	} else if t, err := taskfile.DecodeRecord(data); err != nil {
		v.ReadErr = D.Unreadable + safetext.Line(err.Error())
	} else {
		h.taskFields(v, loc, t)
	}
	v.Shots = h.shots(loc, v.ID)
	if data, fi, err := spool.ReadTail(filepath.Join(loc.logs, v.ID+".log"), maxLogShown); err == nil {
		v.Log = safetext.Text(string(data))
		if fi.Size() > maxLogShown {
			v.LogCut = fmt.Sprintf(D.LogCut, maxLogShown>>10)
		}
	}
}

func (h *httpServer) taskFields(v *taskView, loc located, t *taskfile.Task) {
	D := v.D
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04:05.000 MST")
	}
	add := func(k, val, href string) {
		if val != "" && val != "0" {
			v.Fields = append(v.Fields, field{K: v.L.word(fieldNamesZH, k), V: safetext.Line(val), Href: href})
		}
	}
	word := func(k, val string) {
		if val != "" {
			v.Fields = append(v.Fields, field{K: v.L.word(fieldNamesZH, k), V: val, Word: true})
		}
	}
	v.Batch = safetext.Line(t.Batch)
	if loc.dir == taskfile.DirRunning && !t.StartedAt.IsZero() {
		v.Elapsed = report.Dur(h.now().Sub(t.StartedAt).Seconds())
	}
	v.Priority = t.Priority.String()
	add("taskId", t.TaskID, "")
	add("title", t.Title, "")
	add("lane", string(loc.lane), "")
	word(D.Folder, stateWord(v.L, string(cmp.Or(taskfile.FolderState[loc.dir], taskfile.State(loc.dir)))))
	word("state", stateWord(v.L, string(t.State)))
	add("model", t.Model, "")
	if t.Batch != "" {
		add("batch", t.Batch, batchHref(t.Batch))
	}
	add("priority", string(t.Priority), "")
	add("output", t.Output, "")
	add("attempt", strconv.Itoa(t.Attempt), "")
	add("submittedAt", when(t.SubmittedAt), "")
	add("notBefore", when(t.NotBefore), "")
	add("startedAt", when(t.StartedAt), "")
	add("heartbeatAt", when(t.HeartbeatAt), "")
	add("finishedAt", when(t.FinishedAt), "")
	add("owner", t.Owner, "")
	add("account", t.Account, "")
	add("browserPid", strconv.Itoa(t.BrowserPID), "")
	word("errorClass", v.L.word(classesZH, string(t.ErrorClass)))
	add("error", t.Error, "")
	add("after", strings.Join(t.After, ", "), "")
	add("followUp", t.FollowUp, "")
	if loc.dir == taskfile.DirPending && !t.Filled() {
		if w := status.WaitsFor(h.store.Layout, chain.Parents(t)); w != "" && v.L.Lang == labelsZH.Lang {
			// "waits for a, b": the ids are data, the words the page's.
			add("waits", "等待 "+strings.TrimPrefix(w, "waits for "), "")
		} else {
			add("waits", w, "")
		}
	}
	for _, f := range extraTaskFields(t) {
		if f.K == "usage" { // counts in the page's words, not data
			word(f.K, v.L.usageWords(f.V))
			continue
		}
		add(f.K, f.V, "")
	}
	for _, a := range t.Attempts {
		end := a.EndedAt
		o := a.Outcome
		if end.IsZero() {
			o = string(timeline.Running)
		}
		took := ""
		if !end.IsZero() {
			took = report.Dur(end.Sub(a.ClaimedAt).Seconds())
		}
		v.Attempts = append(v.Attempts, attemptView{N: a.N, Claimed: when(a.ClaimedAt), Started: when(a.StartedAt), Ended: when(end), Took: took,
			Outcome: o, OutcomeText: D.Outcomes[o], Colour: timeline.Colour(timeline.Outcome(o)), Class: v.L.word(classesZH, string(a.ErrorClass)),
			Account: safetext.Line(a.Account), Owner: safetext.Line(a.Owner), Method: safetext.Line(a.Method), HeldUntil: when(a.HeldUntil)})
	}
	if len(t.Attempts) == 0 && !t.StartedAt.IsZero() {
		// A file from before attempts were recorded: its last attempt.
		o := status.LastOutcome(loc.dir)
		v.Attempts = append(v.Attempts, attemptView{N: t.Attempt, Started: when(t.StartedAt), Ended: when(t.FinishedAt), Outcome: o, OutcomeText: D.Outcomes[o],
			Colour: timeline.Colour(timeline.Outcome(o)), Class: string(t.ErrorClass), Account: safetext.Line(t.Account), Owner: safetext.Line(t.Owner)})
	}
	v.Prompt, v.Content = safetext.Text(t.Prompt), safetext.Text(t.Content)
	if t.Result != "" {
		v.Result = safetext.Text(t.Result)
		files, linked := generatedFiles(loc, v.ID, t)
		v.Files = files
		own := markdown.Own{}
		for _, f := range files {
			own[f.Href] = f.Image
		}
		if html, err := markdown.RenderOwn(linked, own); err == nil {
			v.Rendered = html
		}
	}
	v.Reasoning = reasoningOf(v.L.Lang, t)
}

// shots lists the screenshots (ID.N.png) and saved pages (ID.N.html) in
// the task's logs folder, by attempt.
func (h *httpServer) shots(loc located, id string) []shotView {
	ents, err := fsx.ReadDir(loc.logs)
	if err != nil {
		return nil
	}
	base := status.TaskHref(string(loc.lane), id)
	byN := map[string]*shotView{}
	var order []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue // a link or a fifo is never shown (nor served)
		}
		n, ext, ok := artefactName(id, e.Name())
		if !ok {
			continue
		}
		s := byN[n]
		if s == nil {
			s = &shotView{N: n}
			byN[n] = s
			order = append(order, n)
		}
		if ext == "png" {
			s.Src = base + "/shot/" + n
		} else {
			s.PageHref = base + "/page/" + n
		}
	}
	slices.SortFunc(order, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	order = order[max(len(order)-maxShotAttempts, 0):]
	out := make([]shotView, 0, len(order))
	for _, n := range order {
		out = append(out, *byN[n])
	}
	return out
}

// artefactName splits ID.N.png or ID.N.html into N and the extension.
func artefactName(id, name string) (n, ext string, ok bool) {
	rest, ok := strings.CutPrefix(name, id+".")
	if !ok {
		return "", "", false
	}
	n, ext, ok = strings.Cut(rest, ".")
	if !ok || (ext != "png" && ext != "html") || !artefactN(n) {
		return "", "", false
	}
	return n, ext, true
}

// artefactN reports whether n is an artefact's attempt number: 1 to 6
// digits, nothing a path could be made of.
func artefactN(n string) bool {
	return n != "" && len(n) <= 6 && strings.Trim(n, "0123456789") == ""
}

// taskFile serves a screenshot inline (/task/LANE/ID/shot/N) or the
// saved page as a download only (/task/LANE/ID/page/N), never rendered in
// this origin.
func (h *httpServer) taskFile(w http.ResponseWriter, r *http.Request) {
	lane, id, n := r.PathValue("lane"), r.PathValue("id"), r.PathValue("n")
	loc, ok := locateTask(spool.NewLayout(h.cfg.Spool), lane, id)
	if !ok || !artefactN(n) {
		http.NotFound(w, r)
		return
	}
	ext, limit := "png", int64(maxShot)
	if strings.HasSuffix(r.URL.Path, "/page/"+n) {
		ext, limit = "html", maxSavedPage
	}
	name := id + "." + n + "." + ext
	f, fi, err := fsx.OpenOwn(filepath.Join(loc.logs, name), limit)
	if err != nil {
		http.NotFound(w, r) // absent, a link, a fifo, too large: nothing is served
		return
	}
	defer f.Close()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if ext == "png" {
		w.Header().Set("Content-Type", "image/png")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", asciiName(name)))
	}
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	_, _ = io.Copy(w, io.LimitReader(f, fi.Size())) // a file that grew since is cut at the size announced
}

// asciiName is name with anything outside printable ASCII replaced, for a
// Content-Disposition filename.
func asciiName(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || strings.ContainsRune(`"\\/:*?<>|`, r) {
			return '_'
		}
		return r
	}, name)
}

package console

import (
	"cmp"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Bulk actions from a batch page's task list (POST /action do=bulk):
// the ticked tasks (task=LANE/ID, repeated) get one op (cancel, retry,
// priority with level=), always after a confirmation page that names each
// task and says what will happen to it, which are skipped and why, and
// which retries will most likely fail again (permanent failures). The
// confirmation is a plain form, so it works without scripts; the action
// is one audit line naming the tasks it was done to. A task page's cancel
// button asks through the same confirmation, for its one task.

// bulkLabels are the bulk form's and its confirmation's words.
type bulkLabels struct {
	Select, SelectAll, Cancel, Retry, Priority, Title string
	Will, Skip, Again, Missing, Summary, Flash        string
	Levels                                            map[string]string
}

var bulkWords = map[string]bulkLabels{
	"en": {Select: "select", SelectAll: "select all on this page", Cancel: "cancel the selected", Retry: "retry the selected",
		Priority: "set the priority of the selected", Title: "Confirm: %s, %d tasks",
		Will: "will be done", Skip: "skipped: it is %s", Again: "a permanent failure: it will most likely fail again",
		Missing: "no such task", Summary: "%d of %d will be done; %d will most likely fail again", Flash: "done: %s for %d of %d tasks",
		Levels: map[string]string{"high": "high", "normal": "normal", "low": "low"}},
	"zh-CN": {Select: "选择", SelectAll: "全选本页", Cancel: "取消所选任务", Retry: "重试所选任务",
		Priority: "设置所选任务的优先级", Title: "确认：%s，共 %d 个任务",
		Will: "将执行", Skip: "跳过：该任务%s", Again: "永久性失败：重试很可能再次失败",
		Missing: "没有这个任务", Summary: "%d / %d 个将执行；其中 %d 个很可能再次失败", Flash: "完成：%s，%d / %d 个任务",
		Levels: map[string]string{"high": "高", "normal": "普通", "low": "低"}},
}

func (p pageLabels) bulk() bulkLabels {
	if b, ok := bulkWords[p.Lang]; ok {
		return b
	}
	return bulkWords["en"]
}

// bulkOpName is op in the page's words, for the title and the flash.
func bulkOpName(B bulkLabels, op, level string) string {
	switch op {
	case "cancel":
		return B.Cancel
	case "retry":
		return B.Retry
	}
	return B.Priority + " → " + B.Levels[level]
}

type bulkStep struct {
	Ref, Name, Href, Note string
	Skip, Again           bool
}

type bulkView struct {
	L      pageLabels
	A      actView
	B      bulkLabels
	Title  string
	Steps  []bulkStep
	Refs   []string
	Op     string
	Level  string
	Batch  string
	Counts string
}

var bulkTmpl = template.Must(template.New("bulk").Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{{.Title}}</title><style>` + detailCSS + actCSS + `.skip{color:#666}.again{color:#b00020}</style></head><body>
<h1>{{.Title}}</h1>
<p class="confirm-count">{{.Counts}}</p>
<ul class="confirm-tasks">{{range .Steps}}<li class="bulk-step{{if .Skip}} skip{{end}}{{if .Again}} again{{end}}" data-ref="{{.Ref}}"><a href="{{.Href}}" title="{{.Ref}}" translate="no">{{.Name}}</a> — {{.Note}}</li>{{end}}</ul>
<form method="post" action="/action">` + hiddenCSRF + `<input type="hidden" name="do" value="bulk"><input type="hidden" name="op" value="{{.Op}}"><input type="hidden" name="level" value="{{.Level}}"><input type="hidden" name="batch" value="{{.Batch}}">{{range .Refs}}<input type="hidden" name="task" value="{{.}}">{{end}}<input type="hidden" name="confirm" value="yes">
<button id="confirm">{{.A.L.Confirm}}</button> <a href="{{.A.Back}}">{{.A.L.Back}}</a></form>
</body></html>`))

// bulk runs do=bulk for the session's user: a confirmation page first,
// the action on confirm=yes.
func (h *httpServer) bulk(w http.ResponseWriter, r *http.Request, s *session, pl pageLabels, back string) {
	B, L := pl.bulk(), pl.actions()
	op, level, batch := r.PostFormValue("op"), r.PostFormValue("level"), safetext.Line(r.PostFormValue("batch"))
	refs, err := actions.ParseSelection(h.store, r.PostForm["task"])
	if err == nil && !slices.Contains(actions.BulkOps, op) {
		err = &actions.Refused{Field: "op", Msg: fmt.Sprintf("%q is not cancel, retry or priority", op)}
	}
	if err == nil && op == "priority" && !taskfile.Priority(level).Valid() {
		err = &actions.Refused{Field: "priority", Msg: fmt.Sprintf("priority: %q is not high, normal or low", level)}
	}
	var rf *actions.Refused
	if errors.As(err, &rf) {
		h.auth.setFlash(s, L.Refused+": "+L.Problem(rf.Field, rf.Msg))
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	steps := actions.PlanBulk(h.store, op, refs)
	if r.PostFormValue("confirm") != "yes" {
		h.bulkConfirm(w, r, pl, back, op, level, batch, steps)
		return
	}
	done, err := actions.ApplyBulk(h.store, op, taskfile.Priority(level), steps)
	tasks := make([]string, 0, len(done))
	for _, d := range done {
		tasks = append(tasks, d.String())
	}
	detail := fmt.Sprintf("bulk: %d of %d", len(done), len(steps))
	if len(steps) == 1 { // one task's button (the task page's cancel): as the single actions record it
		detail = steps[0].Ref.Dir
	}
	if op == "priority" {
		detail = level + ", " + detail
	}
	if len(done) > 0 {
		h.audit(r, s.user, op, tasks, batch, detail)
	}
	msg := fmt.Sprintf(B.Flash, bulkOpName(B, op, level), len(done), len(steps))
	if err != nil {
		msg += " · " + L.Refused + ": " + safetext.Line(err.Error())
	}
	h.log.Info("console bulk action", "user", s.user, "op", op, "tasks", len(steps), "done", len(done), "err", err)
	h.auth.setFlash(s, msg)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// bulkConfirm shows the plan: each task by name with what will happen.
func (h *httpServer) bulkConfirm(w http.ResponseWriter, r *http.Request, pl pageLabels, back, op, level, batch string, steps []actions.Step) {
	B := pl.bulk()
	av := h.actView(r, pl)
	av.Back = back
	v := bulkView{L: pl, A: av, B: B, Op: op, Level: level, Batch: batch}
	will, again := 0, 0
	for _, s := range steps {
		bs := bulkStep{Ref: s.Ref.String(), Href: status.TaskHref(string(s.Ref.Lane), s.Ref.ID), Name: s.Ref.String(), Note: B.Will}
		if s.Task != nil {
			bs.Name = cmp.Or(taskName(s.Task.Title, s.Task.Content), bs.Name)
		}
		switch {
		case s.Skip == "missing":
			bs.Skip, bs.Note = true, B.Missing
		case s.Skip != "":
			bs.Skip, bs.Note = true, fmt.Sprintf(B.Skip, stateWord(pl, s.Skip))
		case s.Again:
			bs.Again, bs.Note = true, B.Again
			again++
			will++
		default:
			will++
		}
		v.Steps = append(v.Steps, bs)
		v.Refs = append(v.Refs, s.Ref.String())
	}
	v.Title = fmt.Sprintf(B.Title, bulkOpName(B, op, level), len(steps))
	v.Counts = fmt.Sprintf(B.Summary, will, len(steps), again)
	h.render(w, bulkTmpl, &v, http.StatusOK)
}

// stateWord is a task state in the page's words.
func stateWord(L pageLabels, state string) string {
	w := map[string]string{"pending": L.Pending, "running": L.Running, "success": L.Success, "failed": L.Failed, "canceled": L.Canceled}[state]
	return cmp.Or(w, state)
}

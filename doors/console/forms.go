package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The login page and the submit form. The form builds the task `spoolgate
// submit --model ... --content ...` builds and checks it with the same
// call (actions.CheckTask, then actions.DropOne); a refusal comes back
// next to its field, in the page's language.

type loginView struct {
	L            pageLabels
	A            actionLabels
	User, Err    string
	Token, Users bool
}

var loginTmpl = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>spoolgate · {{.A.Login}}</title><style>` + detailCSS + actCSS + `</style></head><body>
<nav><a href="/">← {{.L.Title}}</a></nav>
<h1>{{.A.Login}}</h1>
{{if .Err}}<div class="ferr" id="login-error">{{.Err}}</div>{{end}}
<form method="post" action="/login">
<label for="user">{{.A.User}}</label><input id="user" name="user" value="{{.User}}" autocomplete="username">
<label for="password">{{.A.Password}}</label><input id="password" name="password" type="password" autocomplete="current-password">
{{if .Token}}<div class="meta">{{.A.TokenHint}}</div>{{end}}
<p><button id="login">{{.A.Login}}</button></p>
</form></body></html>`))

type modelChoice struct {
	Name, Lane string
	Selected   bool
}

type submitView struct {
	L          pageLabels
	A          actView
	Models     []modelChoice
	F          map[string]string // the values given
	Errs       map[string]string // by field; "" for one of no field
	Levels     []string
	LevelWords map[string]string // the levels in the page's words
}

var submitTmpl = template.Must(template.New("submit").Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>spoolgate · {{.A.L.Submit}}</title><style>` + detailCSS + actCSS + `</style></head><body>
` + userBar + `
<nav><a href="/">← {{.L.Title}}</a></nav>
<h1>{{.A.L.Submit}}</h1>
{{with index .Errs ""}}<div class="ferr" id="err-form">{{.}}</div>{{end}}
<form method="post" action="/submit">` + hiddenCSRF + `
<label for="model">{{.A.L.Model}}</label><select id="model" name="model"><option value=""></option>{{range .Models}}<option value="{{.Name}}"{{if .Selected}} selected{{end}} translate="no">{{.Name}} ({{.Lane}})</option>{{end}}</select>{{with index .Errs "model"}} <span class="ferr" id="err-model">{{.}}</span>{{end}}
<label for="content">{{.A.L.Content}}</label><textarea id="content" name="content">{{index .F "content"}}</textarea>{{with index .Errs "content"}} <span class="ferr" id="err-content">{{.}}</span>{{end}}
<label for="prompt">{{.A.L.Prompt}} ({{.A.L.Optional}})</label><textarea id="prompt" name="prompt">{{index .F "prompt"}}</textarea>{{with index .Errs "prompt"}} <span class="ferr" id="err-prompt">{{.}}</span>{{end}}
<label for="batch">{{.A.L.Batch}} ({{.A.L.Optional}})</label><input id="batch" name="batch" value="{{index .F "batch"}}">{{with index .Errs "batch"}} <span class="ferr" id="err-batch">{{.}}</span>{{end}}
<label for="priority">{{.A.L.Priority}}</label><select id="priority" name="priority">{{$p := index .F "priority"}}<option value=""></option>{{range $l := .Levels}}<option value="{{$l}}"{{if eq $l $p}} selected{{end}}>{{index $.LevelWords $l}}</option>{{end}}</select>{{with index .Errs "priority"}} <span class="ferr" id="err-priority">{{.}}</span>{{end}}
<label for="output">{{.A.L.Output}} ({{.A.L.Optional}})</label><input id="output" name="output" value="{{index .F "output"}}">{{with index .Errs "output"}} <span class="ferr" id="err-output">{{.}}</span>{{end}}
<label for="taskId">{{.A.L.TaskID}} ({{.A.L.Optional}})</label><input id="taskId" name="taskId" value="{{index .F "taskId"}}">{{with index .Errs "taskId"}} <span class="ferr" id="err-taskId">{{.}}</span>{{end}}
<p><button id="submit">{{.A.L.Submit}}</button></p>
</form></body></html>`))

var levels = []string{string(taskfile.PriorityHigh), string(taskfile.PriorityNormal), string(taskfile.PriorityLow)}

var submitFields = []string{"model", "content", "prompt", "batch", "priority", "output", "taskId"}

func (h *httpServer) models(selected string) []modelChoice {
	out := make([]modelChoice, 0, len(h.cfg.Models))
	for _, m := range h.cfg.Models {
		out = append(out, modelChoice{Name: m.Name, Lane: string(m.Kind), Selected: m.Name == selected})
	}
	return out
}

// needLogin answers a form page's GET without a session.
func (h *httpServer) needLogin(w http.ResponseWriter, r *http.Request) bool {
	if h.auth == nil {
		http.Error(w, labelsFor(r).actions().ReadOnly, http.StatusNotFound)
		return true
	}
	s := h.auth.session(r)
	if s == nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return true
	}
	if !s.role.Allows(config.RoleOperator) { // the gate says so first; kept for a handler served alone
		h.refuseRole(w, r, s, config.RoleOperator)
		return true
	}
	return false
}

func (h *httpServer) submitPage(w http.ResponseWriter, r *http.Request) {
	L := labelsFor(r)
	if r.Method != http.MethodPost {
		if h.needLogin(w, r) {
			return
		}
		h.render(w, submitTmpl, &submitView{L: L, A: h.actView(r, L), Models: h.models(""), F: map[string]string{}, Errs: map[string]string{}, Levels: levels, LevelWords: L.bulk().Levels}, http.StatusOK)
		return
	}
	s := h.authorize(w, r)
	if s == nil {
		return
	}
	v := submitView{L: L, A: h.actView(r, L), F: map[string]string{}, Errs: map[string]string{}, Levels: levels, LevelWords: L.bulk().Levels}
	for _, f := range submitFields {
		v.F[f] = r.PostFormValue(f)
	}
	v.F["content"] = strings.ReplaceAll(v.F["content"], "\r\n", "\n") // a textarea posts CRLF
	v.F["prompt"] = strings.ReplaceAll(v.F["prompt"], "\r\n", "\n")
	v.Models = h.models(v.F["model"])
	t := &taskfile.Task{TaskID: strings.TrimSpace(v.F["taskId"]), Model: v.F["model"], Content: v.F["content"], Prompt: v.F["prompt"],
		Batch: strings.TrimSpace(v.F["batch"]), Output: strings.TrimSpace(v.F["output"]), Priority: taskfile.Priority(v.F["priority"])}
	if t.TaskID == "" {
		t.TaskID = actions.NewTaskID(t.Batch)
	}
	d, err := actions.CheckTask(h.store, "form", t, "")
	if err == nil {
		err = actions.DropOne(h.store, d)
	}
	var rf *actions.Refused
	switch {
	case errors.As(err, &rf):
		field := rf.Field
		if !strings.Contains(" "+strings.Join(submitFields, " ")+" ", " "+field+" ") {
			field = ""
		}
		v.Errs[field] = v.A.L.Problem(rf.Field, strings.TrimPrefix(rf.Msg, "form: "))
		h.render(w, submitTmpl, &v, http.StatusUnprocessableEntity)
		return
	case err != nil:
		v.Errs[""] = err.Error()
		h.render(w, submitTmpl, &v, http.StatusInternalServerError)
		return
	}
	ref := string(d.Lane) + "/" + d.ID
	h.audit(r, s.user, "submit", []string{ref}, t.Batch, "")
	h.auth.setFlashLink(s, fmt.Sprintf("%s%s %s", v.A.L.Done, v.A.L.Verb("submit"), ref), status.TaskHref(string(d.Lane), d.ID))
	http.Redirect(w, r, "/", http.StatusSeeOther) // the task shows once intake has taken it
}

package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The console's actions: POST /action with do= cancel, retry, priority,
// retry-failed (a batch's), bulk (bulk.go), pause, resume, release (an account's hold),
// each through doors/actions, the code its command runs, and each
// written to the audit trail. One that affects more than one task asks
// for confirmation first (a page listing them, confirm=yes).

// formCSP: the pages with forms post to this server only, and are never
// framed (clickjacking).
// Its scripts are console.js (livejs.go), from this server only.
const formCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'"

// actView is what every page needs to show its buttons.
type actView struct {
	On   bool   // logins are configured
	User string // logged in as, "" for none
	// Operate and Admin say which buttons the user's role may use
	// (roles.go): an operator's act on tasks and lanes, an admin's on
	// accounts.
	Operate, Admin bool
	CSRF           string
	Flash          string
	FlashHref      string // the flash's link, "" for none
	Back           string // this page's path, where an action returns
	L              actionLabels
}

func (h *httpServer) actView(r *http.Request, L pageLabels) actView {
	v := actView{On: h.auth != nil, L: L.actions(), Back: r.URL.Path}
	if s := h.auth.session(r); s != nil {
		v.User, v.CSRF = s.user, s.csrf
		if r.Header.Get(liveHeader) == "" { // a live fetch leaves the flash to the page
			v.Flash, v.FlashHref = h.auth.takeFlash(s)
		}
		v.Operate, v.Admin = s.role.Allows(config.RoleOperator), s.role.Allows(config.RoleAdmin)
	}
	return v
}

// userBar is the login line every page starts with.
const userBar = `<div class="userbar">{{if .A.User}}{{.A.L.LoggedInAs}} <b class="user">{{.A.User}}</b> ·{{if .A.Operate}} <a href="/submit" id="submit-link">{{.A.L.Submit}}</a> · <a href="/import" id="import-link">{{.A.L.Import}}</a>{{end}} <form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="{{.A.CSRF}}"><button id="logout">{{.A.L.Logout}}</button></form>{{else if .A.On}}<a href="/login" id="login-link">{{.A.L.Login}}</a>{{end}}</div>
{{if .A.Flash}}<div class="flash" id="flash">{{.A.Flash}}{{if .A.FlashHref}} · <a href="{{.A.FlashHref}}" id="flash-link">{{.A.L.Open}}</a>{{end}}</div>{{end}}`

// actCSS styles the bar and the forms.
const actCSS = `.userbar{float:right;color:#555} form.inline{display:inline;margin:0 .2em} .flash{background:#eef6ee;border:1px solid #9c9;padding:.4em .6em;border-radius:4px;margin:.4em 0}
.ferr{color:#b00} label{display:block;margin:.5em 0 .1em;color:#555} textarea{width:100%;max-width:50em;min-height:6em} .foreign{color:#b00}` + phoneCSS

// hiddenCSRF is the token field every form carries.
const hiddenCSRF = `<input type="hidden" name="csrf" value="{{.A.CSRF}}"><input type="hidden" name="back" value="{{.A.Back}}">`

// render executes t with v and sends it as a page with forms.
func (h *httpServer) render(w http.ResponseWriter, t *template.Template, v any, code int) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		h.log.Error("page", "page", t.Name(), "err", err)
		http.Error(w, "template error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept-Language, Cookie")
	w.Header().Set("Content-Security-Policy", formCSP)
	w.Header().Set("Referrer-Policy", "same-origin") // no-referrer would make a form post's Origin "null"; other sites get no referrer
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// audit appends an action to the audit trail; a failure is logged (the
// action is done).
func (h *httpServer) audit(r *http.Request, user, action string, tasks []string, batch, detail string) {
	if err := h.store.AppendAudit(spool.AuditEntry{Time: h.now(), User: user, Remote: h.client(r), Door: spool.DoorConsole, Action: action,
		Tasks: tasks, Batch: batch, Detail: detail}); err != nil {
		h.log.Error("audit trail: not written", "action", action, "user", user, "err", err)
	}
}

// localBack is where to go after an action: a path of this server, never
// another site ("//evil", "/\\evil").
func localBack(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || strings.ContainsAny(s, "\r\n") {
		return "/"
	}
	return s
}

// action runs one button's action.
func (h *httpServer) action(w http.ResponseWriter, r *http.Request) {
	s := h.authorize(w, r)
	if s == nil {
		return
	}
	pl := labelsFor(r)
	L := pl.actions()
	back := localBack(r.PostFormValue("back"))
	do := r.PostFormValue("do")
	if need := actionRole(do); !s.role.Allows(need) {
		h.refuseRole(w, r, s, need)
		return
	}
	if do == "bulk" {
		h.bulk(w, r, s, pl, back)
		return
	}
	lane := taskfile.Kind(r.PostFormValue("lane"))
	id := r.PostFormValue("id")
	now := h.now()
	ref := func() (actions.Ref, error) {
		if !lane.Valid() || !taskfile.ValidTaskID(id) {
			return actions.Ref{}, &actions.Refused{Field: "taskId", Msg: "not a task: " + safetext.Line(string(lane)+"/"+id)}
		}
		return actions.Locate(h.store, lane, id), nil
	}
	var (
		msg    string
		tasks  []string
		batch  string
		detail string
		err    error
	)
	switch do {
	case "cancel":
		var rf actions.Ref
		if rf, err = ref(); err == nil {
			var out actions.CancelOutcome
			out, err = actions.Cancel(h.store, rf)
			switch {
			case err != nil:
			case out == actions.CancelNotFound:
				err = &actions.Refused{Msg: rf.String() + ": no such task"}
			case out == actions.CancelFinished:
				err = &actions.Refused{Msg: fmt.Sprintf("%s: already %s, nothing to cancel", rf, taskfile.FolderState[rf.Dir])}
			}
			tasks, detail = []string{rf.String()}, rf.Dir
		}
	case "retry":
		var rf actions.Ref
		if rf, err = ref(); err == nil {
			if err = actions.CheckRetry(h.store, rf); err == nil {
				err = actions.Retry(h.store, rf)
			}
			tasks = []string{rf.String()}
		}
	case "priority":
		var rf actions.Ref
		if rf, err = ref(); err == nil {
			level := taskfile.Priority(r.PostFormValue("level"))
			err = actions.SetPriority(h.store, rf, level)
			tasks, detail = []string{rf.String()}, string(level)
		}
	case "retry-failed":
		batch = r.PostFormValue("batch")
		var refs []actions.Ref
		if refs, err = actions.FailedOfBatch(h.cfg, batch, ""); err != nil {
			break
		}
		for _, rf := range refs {
			tasks = append(tasks, rf.String())
		}
		if len(refs) > 1 && r.PostFormValue("confirm") != "yes" {
			// The bulk confirmation: each task by name, the permanent
			// failures marked as likely to fail again; its button
			// retries exactly the tasks listed.
			h.bulkConfirm(w, r, pl, back, "retry", "", batch, actions.PlanBulk(h.store, "retry", refs))
			return
		}
		var done []string
		for _, rf := range refs {
			if e := actions.CheckRetry(h.store, rf); e != nil {
				err = errors.Join(err, e)
				continue
			}
			if e := actions.Retry(h.store, rf); e != nil {
				err = errors.Join(err, e)
				continue
			}
			done = append(done, rf.String())
		}
		tasks, detail = done, fmt.Sprintf("%d of %d", len(done), len(refs))
	case "pause", "resume":
		host := strings.TrimSpace(r.PostFormValue("host"))
		var file string
		if file, err = actions.PauseFile(h.store, lane, host); err == nil {
			if do == "pause" {
				err = actions.Pause(h.store, file, s.user+" (console)", now)
			} else {
				var nr error
				nr, err = actions.Resume(file, now)
				if nr != nil {
					h.log.Warn("resume: the pause is not recorded", "err", nr)
				}
			}
		}
		detail = string(lane)
		if host != "" {
			detail += " host " + host
		}
	case "pause-account":
		account := r.PostFormValue("account")
		err = actions.PauseAccount(h.store, account, s.user+" (console)", now)
		detail = "account " + account
	case "release":
		account := r.PostFormValue("account")
		var out actions.ReleaseOutcome
		out, _, err = actions.ReleaseAccount(h.store, account, now)
		if err == nil && out == actions.ReleaseForeign {
			err = &actions.Refused{Field: "account", Msg: "accounts/" + account + taskfile.HeldExt + " is a foreign file: it holds nothing and is left in place"}
		}
		detail = "account " + account
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
		return
	}
	var rf *actions.Refused
	switch {
	case errors.As(err, &rf) && len(tasks) <= 1:
		msg = L.Refused + ": " + L.Problem(rf.Field, rf.Msg)
	case err != nil:
		msg = L.Refused + ": " + safetext.Line(err.Error())
		if do == "retry-failed" {
			h.audit(r, s.user, "retry", tasks, batch, detail)
		}
	default:
		msg = L.Done + L.Verb(do) + " " + strings.Join(append(append([]string{}, tasks...), detail), " ")
		action := do
		if do == "retry-failed" {
			action = "retry"
		}
		h.audit(r, s.user, action, tasks, batch, detail)
	}
	h.log.Info("console action", "user", s.user, "action", do, "tasks", len(tasks), "err", err)
	h.auth.setFlash(s, strings.TrimSpace(msg))
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// auditView is one audit line as a page shows it.
type auditView struct {
	Text    string
	User    string // who acted, shown as data (not translated) between Text and After
	After   string
	Foreign bool
	Break   bool // a break of the chain (auditchain.go)
}

// auditLines are the actions on one task (LANE/ID) or batch, newest
// first, in the page's words: "cancel requested by 王芳 at 10:42".
// names is whether the reader has logged in: only they see who acted.
func (h *httpServer) auditLines(L actionLabels, now time.Time, task, batch string, names bool) []auditView {
	es, err := h.store.AuditOf(now, task, batch)
	if err != nil {
		h.log.Warn("audit trail", "err", err)
	}
	out := make([]auditView, 0, len(es))
	for i := len(es) - 1; i >= 0 && len(out) < 50; i-- {
		e := es[i]
		when := e.Time.Local().Format("2006-01-02 15:04")
		if e.Time.Local().YearDay() == now.Local().YearDay() && e.Time.Year() == now.Year() {
			when = e.Time.Local().Format("15:04")
		}
		if e.Break != "" {
			out = append(out, breakView(L.lang(), e, when))
			continue
		}
		text := fmt.Sprintf(L.ByAt, L.Verb(e.Action), userMark, when)
		if !names {
			text = anonymousLine(L.lang(), L.Verb(e.Action), when)
		}
		if e.Detail != "" {
			text += " (" + L.detailWords(safetext.Line(e.Detail)) + ")"
		}
		text += chainNote(L.lang(), e)
		if e.Foreign != "" {
			text = L.ForeignLine + text + " — " + e.Foreign
		}
		av := auditView{Text: text, Foreign: e.Foreign != ""}
		if before, after, ok := strings.Cut(text, userMark); ok {
			av.Text, av.User, av.After = before, safetext.Line(e.User), after
		}
		out = append(out, av)
	}
	return out
}

// auditList shows a page's audit lines.
const auditList = `{{if .Audit}}<h2>{{.A.L.Audit}}</h2><ul class="audit">{{range .Audit}}<li class="audit-line{{if .Foreign}} foreign{{end}}{{if .Break}} audit-break foreign{{end}}">{{.Text}}{{if .User}}<span class="who" translate="no">{{.User}}</span>{{end}}{{.After}}</li>{{end}}</ul>{{end}}`

var _ = status.TaskHref

// userMark stands for the user's name in an audit line while it is built.
const userMark = "\ue000"

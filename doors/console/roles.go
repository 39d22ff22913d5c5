package console

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
)

// Roles and what a visitor without a login sees (issue 50). With logins
// configured (console.users or console.token) every page, file and
// download needs a login, but the login page itself; with console.public:
// counts, a visitor who has not logged in also gets the overview's counts
// (countsPage) and /metrics. A logged-in user's role (config.Role, fixed
// at login) decides what they may do: a viewer reads, an operator also
// acts on tasks and lanes, an admin also on accounts (ends holds, opens
// the live view). Without logins nothing changes: the pages are read-only
// and open, as they always were.

// setRoles fills the users' hashes and roles from the config.
func (a *auth) setRoles(c config.ConsoleConfig) {
	a.roles = map[string]config.Role{}
	for n, u := range c.Users {
		a.users[n], a.roles[n] = u.Hash, u.Role
	}
	if c.Token != "" {
		a.roles[config.TokenUser] = c.TokenRole
		if !c.TokenRole.Valid() { // a config not through checkConsole (a test's)
			a.roles[config.TokenUser] = config.RoleAdmin
		}
	}
	a.public = c.PublicCountsOn()
}

// alive reports whether the session id is live, without extending it.
func (a *auth) alive(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	return s != nil && !a.now().After(s.expires)
}

// actionRole is the role POST /action do= needs.
func actionRole(do string) config.Role {
	if do == "release" || do == "pause-account" {
		return config.RoleAdmin // an account's hold: the admin's, as the live view
	}
	return config.RoleOperator
}

// pathRole is the role a request needs beyond a login: the forms and
// their posts an operator's, the live view an admin's, /action its own
// (actionRole, once its form is read), anything else a viewer's.
func pathRole(r *http.Request) config.Role {
	p := r.URL.Path
	switch {
	case p == "/submit" || p == "/import":
		return config.RoleOperator
	case strings.HasPrefix(p, "/live/"):
		return config.RoleAdmin
	}
	return config.RoleViewer
}

// roleWords are the refusal of an action a role may not do.
var roleWords = map[string]string{
	"en":    "refused: this needs the %s role; %s is a %s",
	"zh-CN": "已拒绝：此操作需要 %s 角色；%s 的角色是 %s",
}

// refuseRole answers 403 naming the role needed.
func (h *httpServer) refuseRole(w http.ResponseWriter, r *http.Request, s *session, need config.Role) {
	f := roleWords[labelsFor(r).Lang]
	if f == "" {
		f = roleWords["en"]
	}
	h.log.Info("console: refused for want of a role", "user", s.user, "role", s.role, "need", need, "path", r.URL.Path)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, fmt.Sprintf(f, need, safetext.Line(s.user), s.role), http.StatusForbidden)
}

// gate keeps everything behind the login when logins are configured: a
// visitor without a session gets the login page (303, for a browser's
// page) or 401 (a file, a download, the JSON), the counts with
// console.public: counts; a logged-in user whose role falls short of the
// path's gets 403 naming the role. POSTs pass to their handlers, whose
// authorize answers 401 without a session (and checks CSRF first).
func (h *httpServer) gate(next http.Handler) http.Handler {
	if h.auth == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := h.auth.session(r)
		switch {
		case s != nil:
			if need := pathRole(r); !s.role.Allows(need) {
				h.refuseRole(w, r, s, need)
				return
			}
		case r.URL.Path == "/login" || r.Method == http.MethodPost:
		case h.auth.public && r.URL.Path == "/":
			h.countsPage(w, r)
			return
		case h.auth.public && r.URL.Path == "/metrics":
		default:
			h.needLoginAnswer(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// needLoginAnswer refuses a visitor without a session: a browser asking
// for a page goes to the login page, anything else gets 401.
func (h *httpServer) needLoginAnswer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept, Cookie")
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Error(w, labelsFor(r).actions().NoSession+": /login", http.StatusUnauthorized)
}

// countsTmpl is the overview a visitor without a login sees with
// console.public: counts: each lane's counts, progress and ETA; no task
// id, batch name, account, file name, reason or text. It reloads itself
// with a meta refresh: console.js is behind the login, as all else is.
var countsTmpl = template.Must(template.New("counts").Funcs(template.FuncMap{
	"etab": func(l pageLabels, st *status.Status, e status.ETA) string { return etaText(l, st.Now, e, true) },
	"bar":  outcomeBar,
}).Parse(`<!doctype html>
<html lang="{{.L.Lang}}"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{{.Refresh}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.L.Title}}</title><style>` + detailCSS + actCSS + barCSS + `</style></head><body>
<div class="userbar"><a href="/login" id="login-link">{{.A.Login}}</a></div>
<h1>spoolgate</h1>
{{range .St.Lanes}}<section class="lane" id="lane-{{.Lane}}">
<h2>{{.Lane}} {{$.L.Lane}}{{if .Paused}} <span class="paused">{{$.L.Paused}}</span>{{end}}</h2>
<div>{{bar "lane" .Lane .Counts}}<span class="num">{{.Progress.Finished}}/{{.Progress.Total}}</span>{{.Progress.Percent}}%</div>
<div class="eta">{{$.L.ETA}} {{etab $.L $.St .ETA}}</div>
<table class="counts"><tr><th>{{$.L.Pending}}</th><th>{{$.L.Running}}</th><th>{{$.L.Success}}</th><th>{{$.L.Failed}}</th><th>{{$.L.Canceled}}</th><th>{{$.L.Rejected}}</th><th>{{$.L.Incoming}}</th></tr>
<tr><td class="pending">{{.Counts.Pending}}</td><td class="running">{{.Counts.Running}}</td><td class="success">{{.Counts.Success}}</td><td class="failed">{{.Counts.Failed}}</td><td class="canceled">{{.Counts.Canceled}}</td><td class="rejected">{{.Rejected}}</td><td class="incoming">{{.Incoming}}</td></tr></table>
</section>
{{end}}</body></html>
`))

// countsPage is "/" for a visitor without a login under console.public:
// counts.
func (h *httpServer) countsPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	st, err := h.snap.Snapshot(h.now())
	if err != nil {
		h.log.Warn("status snapshot", "err", err)
		http.Error(w, "status unavailable", http.StatusServiceUnavailable)
		return
	}
	L := labelsFor(r)
	h.render(w, countsTmpl, &struct {
		St      *status.Status
		Refresh int
		L       pageLabels
		A       actionLabels
	}{st, int(pageRefresh / time.Second), L, L.actions()}, http.StatusOK)
}

// auditWords are an audit line for a visitor who has not logged in (no
// logins configured): what and when, not who.
var auditWords = map[string]string{"en": "%s at %s", "zh-CN": "%[2]s %[1]s"}

// anonymousLine is the audit line without its user.
func anonymousLine(lang, verb, when string) string {
	f := auditWords[lang]
	if f == "" {
		f = auditWords["en"]
	}
	return fmt.Sprintf(f, verb, when)
}

// lang is the labels' language.
func (a actionLabels) lang() string {
	if a.ByAt == actionsZH.ByAt {
		return labelsZH.Lang
	}
	return labelsEN.Lang
}

package console

import (
	_ "embed"
	"net/http"
)

// What the pages carry for the browser beyond their HTML: console.js, the
// live updates, and the narrow-screen layout.
//
// Live updates (console.js): the status, batch and task pages mark the
// parts that change as [data-live] regions and name their period in
// <body data-live-every="N">; the script swaps fresh regions in without a
// reload and leaves alone any region with a field being edited. Without
// scripts, a <noscript> meta refresh reloads the page as before.

//go:embed console.js
var consoleJS []byte

// liveHead goes in a live page's <head>: the script, and the refresh for
// a browser without scripts. {{.Refresh}} is the period in seconds.
const liveHead = `<script src="/console.js" defer></script><noscript><meta http-equiv="refresh" content="{{.Refresh}}"></noscript>`

// liveHeader marks the script's own fetches: they must not take the
// session's flash (a message meant for the page an action returns to).
const liveHeader = "X-Spoolgate-Live"

// phoneCSS is every page on a narrow screen (a phone is 360 to 430 px):
// tables become lists (a row a block, its cells flowing as words), the
// outcome bars and side-by-side panes shrink to the width, and only the
// timeline is wider than the screen, scrolling in its own box so its
// hours stay readable.
const phoneCSS = `
.timeline-scroll{overflow-x:auto;max-width:100%}
@media (max-width:640px){
body{margin:.7em}
.userbar{float:none;margin-bottom:.4em}
table,tbody,tr,caption{display:block;width:auto}
td,th{display:inline-block;padding:.1em .8em .1em 0;white-space:normal!important;min-width:0!important;overflow-wrap:anywhere}
tr{border-bottom:1px solid #e3e6ea;padding:.25em 0}
tr:has(>th):not(:has(>td)){color:#666;font-size:.85em}
table.fields th{display:block;padding-top:.3em}
.bar{width:min(20em,60vw)}
.result{flex-direction:column} figure.shot{width:100%}
.timeline-scroll svg.timeline{max-width:none;width:760px}
input:not([type=checkbox]):not([type=radio]),select,textarea{max-width:100%;box-sizing:border-box}
h1{overflow-wrap:anywhere}
}`

// consoleScript serves console.js.
func (h *httpServer) consoleScript(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(consoleJS)
}

package console

import (
	_ "embed"
	"net/http"
)

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

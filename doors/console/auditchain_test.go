package console

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
)

// TestHTTPServer_AuditBreak: a line deleted from the audit file shows as a
// break at its place on the task page; a command-line line says its door.
func TestHTTPServer_AuditBreak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("li", "li-secret")
	for _, level := range []string{"high", "low", "normal"} {
		if resp, body := o.post("/action", url.Values{"do": {"priority"}, "level": {level}, "lane": {"api"}, "id": {"a6"}, "back": {"/"}, "csrf": {o.csrf}}, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("priority: %d %s", resp.StatusCode, body)
		}
	}
	if err := h.store.AppendAudit(spool.AuditEntry{User: "alice@build-01", Door: spool.DoorCLI, Action: "cancel", Tasks: []string{"api/a6"}}); err != nil {
		t.Fatal(err)
	}
	_, page := o.get("/task/api/a6")
	if strings.Contains(page, "audit-break") || !strings.Contains(page, "cancel requested by <span class=\"who\" translate=\"no\">alice@build-01</span> at ") || !strings.Contains(page, "[command line]") {
		t.Fatalf("before the edit, the page shows a break or not the command line's line:\n%s", page)
	}
	file := filepath.Join(cfg.Spool, spool.AuditDir, time.Now().UTC().Format("2006-01")+".log")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.Contains(l, `"detail":"low"`) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(file, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, page = o.get("/task/api/a6")
	i, j, k := strings.Index(page, "(normal)"), strings.Index(page, `audit-break`), strings.Index(page, "(high)")
	if j < 0 || !strings.Contains(page, "1 line(s) missing (or moved) between seq") || !(i < j && j < k) {
		t.Errorf("the deleted line's break is not shown between its neighbours (newest first: normal, break, high):\n%s", page)
	}
}

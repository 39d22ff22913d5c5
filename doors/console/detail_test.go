package console

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The task and batch pages: found by lane and id, archive included; a
// name that is no task is a 404; the saved page is a download; the
// batch's downloads are the bytes of `spoolgate results`.
func TestHTTPServer_DetailPages(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	logs := L.Lane(taskfile.KindAPI, taskfile.DirLogs)
	for name, data := range map[string]string{"a3.log": "line <b>one</b>\n", "a3.1.png": "\x89PNG fake", "a3.1.html": "<html><script>x</script></html>"} {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	month := filepath.Join(L.Archive(taskfile.KindAPI), "2025-01", taskfile.DirDone)
	if err := os.MkdirAll(month, 0o755); err != nil {
		t.Fatal(err)
	}
	old := taskfile.Task{TaskID: "old", ModelKind: taskfile.KindAPI, Model: "writer", Content: "x", State: taskfile.StateSuccess, Result: "# Done"}
	data, _ := old.Encode()
	if err := os.WriteFile(filepath.Join(month, "old.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()

	resp, body := get(t, h, "/task/api/a3")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "line &lt;b&gt;one&lt;/b&gt;") || !strings.Contains(string(body), `src="/task/api/a3/shot/1"`) ||
		!strings.Contains(string(body), `href="/task/api/a3/page/1" download`) || resp.Header.Get("Content-Security-Policy") != taskCSP {
		t.Errorf("/task/api/a3 = %d %s\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, body := get(t, h, "/task/api/old"); resp.StatusCode != 200 || !strings.Contains(string(body), "<h1>Done</h1>") || !strings.Contains(string(body), "2025-01") {
		t.Errorf("archived task: %d\n%s", resp.StatusCode, body)
	}
	resp, _ = get(t, h, "/task/api/a3/page/1")
	if resp.Header.Get("Content-Disposition") != `attachment; filename="a3.1.html"` || resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("saved page served as %s", resp.Header)
	}
	if resp, _ := get(t, h, "/task/api/a3/shot/1"); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("screenshot: %d %s", resp.StatusCode, resp.Header)
	}
	for _, p := range []string{"/task/api/nope", "/task/api/..", "/task/api/a3/shot/2", "/task/api/a3/shot/x", "/task/nolane/a3", "/batch/nope", "/task/api/a%2Fb"} {
		if resp, _ := get(t, h, p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s = %d, want 404", p, resp.StatusCode)
		}
	}
	resp, body = get(t, h, "/batch/b1")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<a href="/task/api/a3">api/a3</a>`) || !strings.Contains(string(body), "spoolgate retry --batch b1 --failed") ||
		!strings.Contains(string(body), `<svg class="timeline"`) {
		t.Errorf("/batch/b1 = %d\n%s", resp.StatusCode, body)
	}
	rows, err := report.ReadResults(cfg, "b1", true)
	if err != nil {
		t.Fatal(err)
	}
	var csv, jsonl bytes.Buffer
	_ = report.WriteResultsCSV(&csv, rows, true)
	_ = report.WriteResultsJSONL(&jsonl, rows)
	resp, got := get(t, h, "/batch/b1?download=csv")
	if !bytes.Equal(got, append([]byte("\ufeff"), csv.Bytes()...)) {
		t.Errorf("csv download is not a byte order mark and the bytes of results:\n%s\n%s", got, csv.Bytes())
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="results-b1.csv"; filename*=UTF-8''results-b1.csv` {
		t.Errorf("csv download saved as %q", cd)
	}
	if cd := attachment("results-春季 上新.csv"); cd != `attachment; filename="results-__ __.csv"; filename*=UTF-8''results-%E6%98%A5%E5%AD%A3%20%E4%B8%8A%E6%96%B0.csv` {
		t.Errorf("a Chinese batch name is saved as %q", cd)
	}
	if _, got := get(t, h, "/batch/b1?download=jsonl"); !bytes.Equal(got, jsonl.Bytes()) {
		t.Errorf("jsonl download differs from results")
	}
	var gb bytes.Buffer
	_ = report.WriteResultsGB18030CSV(&gb, rows, true)
	if resp, got := get(t, h, "/batch/b1?download=csv&encoding=gb18030"); !bytes.Equal(got, gb.Bytes()) || resp.Header.Get("Content-Type") != "text/csv; charset=gb18030" {
		t.Errorf("gb18030 download (%s) differs from results", resp.Header.Get("Content-Type"))
	}
	if resp, got := get(t, h, "/batch/b1?download=xlsx"); resp.StatusCode != 200 || !bytes.HasPrefix(got, []byte("PK")) ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="results-b1.xlsx"; filename*=UTF-8''results-b1.xlsx` {
		t.Errorf("xlsx download = %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Disposition"), len(got))
	}
	for _, q := range []string{"download=pdf", "download=jsonl&encoding=gb18030", "download=csv&encoding=latin1"} {
		if resp, _ := get(t, h, "/batch/b1?"+q); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("?%s = %d, want 400", q, resp.StatusCode)
		}
	}
	if resp, _ := get(t, h, "/?since=soon"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("?since=soon = %d", resp.StatusCode)
	}
	if _, body := get(t, h, "/?since=off"); strings.Contains(string(body), "<svg") {
		t.Errorf("?since=off still draws the timeline")
	}
	if _, body := get(t, h, "/"); !strings.Contains(string(body), `<svg class="timeline"`) {
		t.Errorf("the status page has no timeline")
	}
}

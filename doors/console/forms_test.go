package console

import (
	"archive/zip"
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// upload posts a table to /import as the page's form does.
func (o *operator) upload(name string, data []byte, fields map[string]string, hdr map[string]string) (*http.Response, string) {
	o.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", o.csrf)
	_ = mw.WriteField("step", "preview")
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if name != "" { // "": the form sent without a file (a correction)
		fw, _ := mw.CreateFormFile("file", name)
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, o.url("/import"), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", "http://"+o.h.Addr().String())
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return o.do(req)
}

func incoming(t *testing.T, spoolDir string, k taskfile.Kind) map[string]*taskfile.Task {
	t.Helper()
	dir := filepath.Join(spoolDir, string(k), taskfile.DirIncoming)
	es, _ := os.ReadDir(dir)
	out := map[string]*taskfile.Task{}
	for _, e := range es {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		tk, err := taskfile.DecodeTask(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[strings.TrimSuffix(e.Name(), ".yaml")] = tk
	}
	return out
}

func TestHTTPServer_SubmitForm(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("li", "li-secret")
	for _, tc := range []struct {
		name, lang string
		form       url.Values
		code       int
		want       string // in the page
	}{
		{name: "no content", form: url.Values{"model": {"writer"}}, code: http.StatusUnprocessableEntity, want: `id="err-content">content: missing or empty`},
		{name: "no content, Chinese page", lang: "zh-CN", form: url.Values{"model": {"writer"}}, code: http.StatusUnprocessableEntity, want: `id="err-content">内容: 不能为空`},
		{name: "unknown model", form: url.Values{"model": {"nope"}, "content": {"x"}}, code: http.StatusUnprocessableEntity, want: `id="err-model">model: &#34;nope&#34; is not in the config`},
		{name: "bad priority", form: url.Values{"model": {"writer"}, "content": {"x"}, "priority": {"urgent"}}, code: http.StatusUnprocessableEntity, want: `id="err-priority"`},
		{name: "existing id", form: url.Values{"model": {"writer"}, "content": {"x"}, "taskId": {"a1"}}, code: http.StatusUnprocessableEntity, want: `id="err-taskId">task id: taskId &#34;a1&#34; already exists in api/done/`},
		{name: "hostile content kept as text", form: url.Values{"model": {"writer"}, "content": {"<script>alert(1)</script>"}, "taskId": {"f1"}, "batch": {"form"}}, code: http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("csrf", o.csrf)
			resp, body := o.post("/submit", tc.form, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%d (want %d), want %q in\n%s", resp.StatusCode, tc.code, tc.want, body)
			}
			if strings.Contains(body, "<script>alert") {
				t.Error("markup echoed raw")
			}
		})
	}
	got := incoming(t, cfg.Spool, taskfile.KindAPI)
	if tk := got["f1"]; tk == nil || tk.Content != "<script>alert(1)</script>" || tk.Batch != "form" || len(got) != 1 {
		t.Errorf("incoming: %v", got)
	}
}

func TestHTTPServer_Import(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("王芳", "wang-secret")
	hostile := []string{`<img src=x onerror=alert(1)>`, `javascript:alert(1)`, `=HYPERLINK("http://evil","x")`, `+1+1`, `-2+3`, `@SUM(A1)`}
	csv := "channel,topic,tone\n公众号,春茶上新,轻松\n微博,,正式\n"
	for i, c := range hostile {
		csv += fmt.Sprintf("c%d,\"%s\",t\n", i, strings.ReplaceAll(c, `"`, `""`))
	}
	gb, _ := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(csv))
	fields := map[string]string{"template": "为{{channel}}写一篇关于{{topic}}的稿子，语气{{tone}}", "model": "writer", "batch": "春季"}
	resp, page := o.upload("topics.csv", gb, fields, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "csv gb18030") || !strings.Contains(page, `data-row="3"`) ||
		!strings.Contains(page, "column topic is empty") || !strings.Contains(page, "submit 7 valid rows as batch 春季") {
		t.Fatalf("preview: %d\n%s", resp.StatusCode, page)
	}
	if strings.Contains(page, "<img src=x") || strings.Contains(page, `href="javascript`) {
		t.Fatalf("a hostile cell is live on the preview:\n%s", page)
	}
	// Each previewed row shows the prompt it becomes; the column fields
	// offer the file's headers.
	if !strings.Contains(page, `<td class="filled" translate="no">为公众号写一篇关于春茶上新的稿子，语气轻松</td>`) ||
		!strings.Contains(page, `<datalist id="headers"><option value="channel"><option value="topic"><option value="tone"></datalist>`) ||
		!strings.Contains(page, `<input id="contentCol" name="contentCol" list="headers"`) {
		t.Errorf("the preview lacks the filled prompts or the headers' pick-list:\n%s", page)
	}
	resp, _ = o.post("/import", url.Values{"csrf": {o.csrf}, "step": {"submit"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("submit: %d", resp.StatusCode)
	}
	got := incoming(t, cfg.Spool, taskfile.KindAPI)
	if len(got) != 7 {
		t.Fatalf("incoming: %d tasks: %v", len(got), got)
	}
	var first *taskfile.Task
	for id, tk := range got {
		if !strings.HasPrefix(id, "b-") {
			t.Errorf("task id %q: want b-HASH-rN for batch 春季", id)
		}
		if strings.HasSuffix(id, "-r2") {
			first = tk
		}
	}
	if first == nil || first.Content != "为公众号写一篇关于春茶上新的稿子，语气轻松" || first.Batch != "春季" || first.Model != "writer" {
		t.Fatalf("row 2: %+v", first)
	}
	// Every hostile row's task page shows its cell as text.
	for id, tk := range got {
		_, page := o.get("/task/api/" + id)
		if !strings.Contains(page, `class="content"`) || strings.Contains(page, "<img src=x") || strings.Contains(page, `href="javascript`) {
			t.Errorf("task page of %s (%q) is not inert:\n%s", id, tk.Content, page)
		}
	}
	// The same file again: every row a duplicate, nothing dropped twice.
	_, page = o.upload("topics.csv", gb, fields, nil)
	// The seven duplicates are one line; the row in error stays listed.
	if !strings.Contains(page, "no valid rows") || strings.Count(page, `class="row-error"`) != 1 || !strings.Contains(page, `id="import-dups">7 rows were submitted before`) {
		t.Fatalf("second upload:\n%s", page)
	}
	if n := len(incoming(t, cfg.Spool, taskfile.KindAPI)); n != 7 {
		t.Fatalf("%d tasks after the second upload", n)
	}
	// A table with a follow-up column and a chain to another model: each
	// row becomes its task, the follow-up in the same chat (ID-f) and the
	// chained task on the other model (ID-c) that uses the last answer.
	pipe := "topic,more\n春茶,再短一点\n"
	_, page = o.upload("pipe.csv", []byte(pipe), map[string]string{"contentCol": "topic", "model": "writer", "batch": "管线",
		"followUpCol": "more", "thenModel": "writer", "then": "总结：{{result}}"}, nil)
	if !strings.Contains(page, "submit 1 valid rows as batch 管线") {
		t.Fatalf("pipeline preview:\n%s", page)
	}
	if resp, _ := o.post("/import", url.Values{"csrf": {o.csrf}, "step": {"submit"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pipeline submit: %d", resp.StatusCode)
	}
	var f, c *taskfile.Task
	for id, tk := range incoming(t, cfg.Spool, taskfile.KindAPI) {
		switch {
		case strings.HasSuffix(id, "-r2-f"):
			f = tk
		case strings.HasSuffix(id, "-r2-c"):
			c = tk
		}
	}
	if f == nil || c == nil || f.Content != "再短一点" || !strings.HasSuffix(f.FollowUp, "-r2") || len(c.After) != 1 || c.After[0] != f.TaskID ||
		c.Content != "总结：{{"+f.TaskID+".result}}" {
		t.Fatalf("the pipeline's tasks: follow-up %+v, chained %+v", f, c)
	}

	// A correction keeps the file: the template names a column the table
	// lacks; fixed, the form previews again without the file.
	resp, page = o.upload("fix.csv", []byte("topic\n春茶\n"), map[string]string{"template": "{{topc}}", "model": "writer", "batch": "改"}, nil)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, `id="kept-file">kept: <span translate="no">fix.csv</span> (`) {
		t.Fatalf("a template error: %d, the file not kept:\n%s", resp.StatusCode, page)
	}
	resp, page = o.upload("", nil, map[string]string{"template": "写{{topic}}", "model": "writer", "batch": "改"}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "submit 1 valid rows as batch 改") || !strings.Contains(page, `<td class="filled" translate="no">写春茶</td>`) {
		t.Fatalf("the correction without a file: %d\n%s", resp.StatusCode, page)
	}

	// The batch's CSV download neutralises the hostile cells.
	var rows []report.Row
	for id, tk := range got {
		rows = append(rows, report.Row{TaskID: id, Lane: taskfile.KindAPI, Batch: tk.Batch, Result: tk.Content})
	}
	var buf bytes.Buffer
	if err := report.WriteResultsCSV(&buf, rows, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		for _, f := range strings.Split(line, ",") {
			f = strings.Trim(f, `"`)
			if f != "" && strings.ContainsRune("=+-@", rune(f[0])) {
				t.Errorf("a CSV cell starts with %q: %s", f[:1], line)
			}
		}
	}
}

func TestHTTPServer_ImportRefused(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, consoleWithUsers(t), nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("li", "li-secret")
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	w, _ := zw.Create("xl/worksheets/sheet1.xml")
	w.Write(make([]byte, 4<<20))
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		code int
		want string
	}{
		{"50 MB", bytes.Repeat([]byte("a,b\n"), 50<<20/4), http.StatusRequestEntityTooLarge, "the upload is too large (at most 8 MiB)"},
		{"zip bomb", bomb.Bytes(), http.StatusRequestEntityTooLarge, "zip bomb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := o.upload("t.xlsx", tc.data, map[string]string{"contentCol": "a"}, nil)
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%d: %s", resp.StatusCode, body)
			}
		})
	}
}

func TestHTTPServer_BatchRetryConfirm(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	// A second failed task of b1, so the retry affects two.
	src := filepath.Join(cfg.Spool, "api", "failed", "a3.yaml")
	data, _ := os.ReadFile(src)
	os.WriteFile(filepath.Join(cfg.Spool, "api", "failed", "a8.yaml"), bytes.Replace(data, []byte("taskId: a3"), []byte("taskId: a8"), 1), 0o644)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("li", "li-secret")
	_, page := o.get("/batch/b1")
	if !strings.Contains(page, `id="retry-failed"`) {
		t.Fatalf("no retry button:\n%s", page)
	}
	resp, page := o.post("/action", url.Values{"csrf": {o.csrf}, "do": {"retry-failed"}, "batch": {"b1"}, "back": {"/batch/b1"}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "2 of 2 will be done") || !strings.Contains(page, `data-ref="api/a8"`) {
		t.Fatalf("no confirmation: %d\n%s", resp.StatusCode, page)
	}
	if n := len(incoming(t, cfg.Spool, taskfile.KindAPI)); n != 0 {
		t.Fatalf("retried before confirmation: %d", n)
	}
	resp, _ = o.post("/action", url.Values{"csrf": {o.csrf}, "do": {"retry-failed"}, "batch": {"b1"}, "back": {"/batch/b1"}, "confirm": {"yes"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || len(incoming(t, cfg.Spool, taskfile.KindAPI)) != 2 {
		t.Fatalf("confirmed retry: %d", resp.StatusCode)
	}
	_, page = o.get("/")
	_, page = o.get("/batch/b1")
	if !strings.Contains(page, "retried by <span class=\"who\" translate=\"no\">li</span> at ") {
		t.Errorf("the batch page does not show the retry:\n%s", page)
	}
}

func TestHTTPServer_PauseResume(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("li", "li-secret")
	paused := filepath.Join(cfg.Spool, "api", "paused")
	for _, tc := range []struct {
		form   url.Values
		file   string
		exists bool
	}{
		{url.Values{"do": {"pause"}, "lane": {"api"}}, paused, true},
		{url.Values{"do": {"resume"}, "lane": {"api"}}, paused, false},
		{url.Values{"do": {"pause"}, "lane": {"api"}, "host": {"pc7"}}, paused + ".pc7", true},
		{url.Values{"do": {"resume"}, "lane": {"api"}, "host": {"pc7"}}, paused + ".pc7", false},
		{url.Values{"do": {"pause"}, "lane": {"api"}, "host": {"../x"}}, filepath.Join(cfg.Spool, "api", "x"), false},
	} {
		tc.form.Set("csrf", o.csrf)
		if resp, body := o.post("/action", tc.form, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%v: %d %s", tc.form, resp.StatusCode, body)
		}
		if _, err := os.Stat(tc.file); (err == nil) != tc.exists {
			t.Errorf("%v: %s exists %v", tc.form, tc.file, err == nil)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(cfg.Spool, "api", "pauses.log")); !strings.Contains(string(data), "paused by li (console)") {
		t.Errorf("pauses.log: %q", data)
	}
}

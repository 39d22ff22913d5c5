package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The task page shows a task's generated images inline and its other
// files as downloads; the file route serves only names the task file
// lists, from its own outputs folder: a listed path that climbs out (a
// colleague's hand-edited record), a name not listed, a link, or a
// traversal in the URL gets 404.
func TestHTTPServer_GeneratedFiles(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	done := L.Lane(taskfile.KindWeb, taskfile.DirDone)
	out := filepath.Join(L.Lane(taskfile.KindWeb, taskfile.DirOutputs), "g1")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	png := "\x89PNG\r\n\x1a\nfake"
	for name, data := range map[string]string{"01.png": png, "02.csv": "a,b\n"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(cfg.Spool, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(out, "04.txt")); err != nil {
		t.Fatal(err)
	}
	// A folder a colleague replaced with a link out of the spool: the path
	// stays beneath outputs/g1 by its text, not on the disk.
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(out, "sub")); err != nil {
		t.Fatal(err)
	}
	task := taskfile.Task{TaskID: "g1", ModelKind: taskfile.KindWeb, Model: "chat", Content: "x", State: taskfile.StateSuccess,
		Result: "![Chart](../outputs/g1/01.png) and [figures](../outputs/g1/02.csv)",
		Artifacts: []taskfile.Artifact{
			{Name: "01.png", Path: "../outputs/g1/01.png", Type: "image/png", Size: int64(len(png)), SHA256: "x", Title: "Chart"},
			{Name: "02.csv", Path: "../outputs/g1/02.csv", Type: "text/plain", Size: 4, SHA256: "y"},
			{Name: "secret.txt", Path: "../../../secret.txt", Type: "text/plain", Size: 6, SHA256: "z"},
			{Name: "04.txt", Path: "../outputs/g1/04.txt", Type: "text/plain", Size: 6, SHA256: "w"},
			{Name: "secret.txt", Path: "../outputs/g1/sub/secret.txt", Type: "text/plain", Size: 6, SHA256: "v"},
		}}
	data, err := task.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(done, "g1.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()

	resp, body := get(t, h, "/task/web/g1")
	for _, want := range []string{`<img src="/task/web/g1/file/01.png" alt="Chart">`, `<a href="/task/web/g1/file/02.csv" download>02.csv</a>`} {
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("/task/web/g1 lacks %q:\n%s", want, body)
		}
	}
	// The answer itself shows its image and links its file (it showed
	// "Chart" and "figures" as text before, issue 53).
	if n := strings.Count(string(body), `<img src="/task/web/g1/file/01.png" alt="Chart">`); n != 2 {
		t.Errorf("the image is shown %d times, want 2 (the answer, the files)", n)
	}
	if !strings.Contains(string(body), `<a href="/task/web/g1/file/02.csv">figures</a>`) {
		t.Errorf("the answer's link to its file is not a link:\n%s", body)
	}
	resp, body = get(t, h, "/task/web/g1/file/01.png")
	if resp.StatusCode != 200 || string(body) != png || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Disposition") != "" {
		t.Errorf("01.png: %d %s %q", resp.StatusCode, resp.Header, body)
	}
	resp, body = get(t, h, "/task/web/g1/file/02.csv")
	if resp.StatusCode != 200 || string(body) != "a,b\n" || resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("Content-Disposition") != `attachment; filename="02.csv"` || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("02.csv: %d %s %q", resp.StatusCode, resp.Header, body)
	}
	for _, p := range []string{"/task/web/g1/file/secret.txt", "/task/web/g1/file/04.txt", "/task/web/g1/file/03.png", "/task/web/g1/file/..%2F..%2Fsecret.txt",
		"/task/web/g1/file/.hidden", "/task/web/nope/file/01.png", "/task/web/..%2Fg1/file/01.png"} {
		if resp, body := get(t, h, p); resp.StatusCode != 404 || strings.Contains(string(body), "secret") {
			t.Errorf("%s = %d %q, want 404", p, resp.StatusCode, body)
		}
	}
}

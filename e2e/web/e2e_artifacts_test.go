//go:build linux

package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 43, artefacts out, through `spoolgate run`: answers with two
// generated images and a file link, read by network (the stream names
// them) and by dom (the page shows them): each file is fetched through
// the signed-in page's session (the stand-in serves them to no one else),
// saved byte for byte as <lane>/outputs/ID/NN.ext (or beside output:),
// listed in the task file's artifacts: and linked from the result, where
// the site's address appears nowhere.
func TestE2E_Web_GeneratedFiles(t *testing.T) {
	t.Parallel()
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):] + "    artifactsFrom: [/files/]\n" // where the stand-in keeps generated files (issue 49)
	sites := []*rig.Site{
		{Name: "net", Opts: chatstand.Options{Renderer: "markdown-it"}, Keys: keys + "    read: [network]\n"},
		{Name: "dom", Opts: chatstand.Options{Renderer: "react-markdown"}, Keys: keys + "    read: [dom]\n"},
	}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true, HTTP: "127.0.0.1:0"}, 0.005, sites...)
	// Issue 49: `site new --picture` proposes the artifactsFrom the sites
	// above are given by hand, from the answer to a picture probe.
	code, out, errOut := sr.Run("site", "new", "auto", "--url", sr.Site["net"].Stand.URL(), "--probe", "--picture")
	if block := out[strings.Index(out, "\nsites:\n")+1:]; code != 0 || !strings.Contains(block, "artifactsFrom: [/files/]") {
		t.Errorf("site new --probe --picture: exit %d, no artifactsFrom: [/files/] in the block:\n%s%s", code, out, errOut)
	}
	d := sr.Start()
	console := rig.StatusURL(t, d)
	tasks := []rig.Task{
		{ID: "media-net", Model: "net", Content: "[[media]] charts by network"},
		{ID: "media-dom", Model: "dom", Content: "[[media]] charts by dom, beside an output", Output: "reports/charts.md"},
	}
	sr.Submit(tasks...)
	for _, task := range tasks {
		site := sr.Site[task.Model]
		got := sr.Final(taskfile.KindWeb, task.ID, 90*time.Second)
		if got.State != taskfile.StateSuccess {
			t.Errorf("%s: %s %s %q\nlog:\n%s", task.ID, got.State, got.ErrorClass, got.Error, testkit.Tail(sr.TaskLog(taskfile.KindWeb, task.ID), 30))
			continue
		}
		want := chatstand.MediaFiles(task.Content)
		if len(got.Artifacts) != len(want) {
			t.Errorf("%s: artifacts %+v, want %d", task.ID, got.Artifacts, len(want))
			continue
		}
		// Where the result's links are relative to: the task file's
		// folder, or the output file's.
		base := sr.L.Lane(taskfile.KindWeb, taskfile.DirDone)
		result := got.Result
		if task.Output != "" {
			base = filepath.Join(sr.L.Output(), filepath.Dir(task.Output))
			out, err := os.ReadFile(filepath.Join(sr.L.Output(), task.Output))
			if err != nil || string(out) != got.Result {
				t.Errorf("%s: output file %q (%v), want the result", task.ID, out, err)
			}
		}
		for i, a := range got.Artifacts {
			sum := sha256.Sum256(want[i].Data)
			data, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(a.Path)))
			disk := sha256.Sum256(data)
			if err != nil || a.SHA256 != hex.EncodeToString(sum[:]) || disk != sum || a.Size != int64(len(want[i].Data)) {
				t.Errorf("%s: artifact %d %+v (read %v): want the %d bytes the stand-in served, sha256 %x", task.ID, i+1, a, err, len(want[i].Data), sum)
			}
			if !strings.Contains(result, "("+a.Path+")") {
				t.Errorf("%s: the result does not link %s:\n%s", task.ID, a.Path, result)
			}
		}
		wantNames := []string{"01.png", "02.png", "03.csv"}
		wantType := []string{"image/png", "image/png", "text/plain"}
		for i, a := range got.Artifacts {
			name := wantNames[i]
			if task.Output != "" {
				name = "charts-" + name
			}
			if a.Name != name || a.Type != wantType[i] || (task.Output == "" && a.Path != "../outputs/"+task.ID+"/"+name) || a.Source != "" {
				t.Errorf("%s: artifact %d is %+v, want %s of type %s", task.ID, i+1, a, name, wantType[i])
			}
		}
		for _, leak := range []string{"/files/", site.Stand.URL(), "127.0.0.1"} {
			if strings.Contains(result, leak) {
				t.Errorf("%s: the result names the site's address (%q):\n%s", task.ID, leak, result)
			}
		}
		// The addresses work only in the signed-in session.
		resp, err := http.Get(strings.TrimSuffix(site.Stand.URL(), "/") + want[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: a request without the session got %d, want 403", task.ID, resp.StatusCode)
		}
	}
	// The console's task page shows the images inline and offers the
	// file as a download, the bytes the stand-in served.
	want := chatstand.MediaFiles(tasks[0].Content)
	page, _ := rig.Get(t, console+"/task/web/media-net")
	for _, w := range []string{`<img src="/task/web/media-net/file/01.png"`, `<img src="/task/web/media-net/file/02.png"`, `<a href="/task/web/media-net/file/03.csv" download>`} {
		if !strings.Contains(page, w) {
			t.Errorf("the task page lacks %s:\n%s", w, page)
		}
	}
	for i, name := range []string{"01.png", "03.csv"} {
		body, h := rig.Get(t, console+"/task/web/media-net/file/"+name)
		if body != string(want[i*2].Data) || h.Get("X-Content-Type-Options") != "nosniff" || (name == "03.csv") != strings.HasPrefix(h.Get("Content-Disposition"), "attachment") {
			t.Errorf("console file %s: %d bytes, headers %v", name, len(body), h)
		}
	}
	d.Stop()
	if csv := sr.CLI("results", "--format", "csv", "media-net"); !strings.Contains(strings.SplitN(csv, "\n", 2)[0], ",artifacts") || !strings.Contains(csv, filepath.Join(sr.L.Lane(taskfile.KindWeb, taskfile.DirOutputs), "media-net", "02.png")) {
		t.Errorf("results --format csv lacks the artifacts column with the files' paths:\n%s", csv)
	}
	for _, s := range sites {
		if served, refused := s.Stand.MediaServed(); served < 3 || refused != 1 {
			t.Errorf("site %s served %d generated files to its session and refused %d requests without it, want at least 3 and the test's 1", s.Name, served, refused)
		}
	}
	var row struct {
		TaskID    string
		Artifacts []taskfile.Artifact
	}
	for _, line := range strings.Split(strings.TrimSpace(sr.CLI("results", "--format", "jsonl", "media-net")), "\n") {
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("results: %v: %q", err, line)
		}
	}
	if row.TaskID != "media-net" || len(row.Artifacts) != 3 || row.Artifacts[0].Path != "../outputs/media-net/01.png" {
		t.Errorf("results --format jsonl media-net: %+v, want its three artifacts", row)
	}
}

// Issue 43: a model with endpoint: images (OpenAI's images API on the API
// stand-in) gets two pictures, one as b64_json and one as a url: both are
// saved as the task's artifacts, byte for byte, listed and linked, and
// the url is in neither the result nor the task file.
func TestE2E_API_ImagesEndpoint(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{})
	tail := fmt.Sprintf("models:\n  - {name: painter, kind: api, endpoint: images, baseURL: %q, model: stand-in-image, timeout: 10s}\n", stand.URL())
	r := rig.New(t, rig.Opts{Tail: tail})
	d := r.Start()
	r.Submit(rig.Task{ID: "poster-1", Model: "painter", Content: "a spring tea poster"})
	got := r.Final(taskfile.KindAPI, "poster-1", 20*time.Second)
	d.Stop()
	want := apistand.Pictures("a spring tea poster")
	if got.State != taskfile.StateSuccess || len(got.Artifacts) != len(want) {
		t.Fatalf("poster-1: %s %q, artifacts %+v; want success with %d pictures", got.State, got.Error, got.Artifacts, len(want))
	}
	raw, err := os.ReadFile(r.L.TaskPath(taskfile.KindAPI, taskfile.DirDone, "poster-1"))
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range got.Artifacts {
		data, err := os.ReadFile(filepath.Join(r.L.Lane(taskfile.KindAPI, taskfile.DirDone), filepath.FromSlash(a.Path)))
		sum := sha256.Sum256(want[i])
		if err != nil || !bytes.Equal(data, want[i]) || a.SHA256 != hex.EncodeToString(sum[:]) || a.Type != "image/png" || a.Name != fmt.Sprintf("%02d.png", i+1) {
			t.Errorf("picture %d: %+v (read %v), want the stand-in's %d bytes", i+1, a, err, len(want[i]))
		}
		if !strings.Contains(got.Result, "]("+a.Path+")") {
			t.Errorf("the result does not link %s: %q", a.Path, got.Result)
		}
	}
	if strings.Contains(string(raw), "/v1/files/") {
		t.Errorf("the task file names the picture's url:\n%s", raw)
	}
}

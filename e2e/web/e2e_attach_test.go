//go:build linux

package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Attachments' test files: a JPEG (its first bytes are what the sniffer
// reads, the rest arbitrary), a PDF and a text file with a CJK name.
var (
	e2eJPEG = append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1}, bytes.Repeat([]byte{0x5a, 0xa5, 0x00, 0xff}, 600)...)
	e2ePDF  = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	e2eText = []byte("春季新品：绿茶礼盒\n```\nnot a fence of ours\n")
)

// e2eAttachFiles writes the three files into the spool's files/ and
// returns that folder.
func e2eAttachFiles(t *testing.T, r *rig.Rig) string {
	t.Helper()
	files := attach.FilesFolder(r.L.Root)
	if err := os.MkdirAll(files, 0o750); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"ref.jpg": e2eJPEG, "sheet.pdf": e2ePDF, "说明.txt": e2eText} {
		if err := os.WriteFile(filepath.Join(files, name), b, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// e2eSubmitFile writes a task file with attachments and runs `spoolgate
// submit` on it, returning the exit status and stderr.
func e2eSubmitFile(t *testing.T, r *rig.Rig, id, model string, paths ...string) (int, string) {
	t.Helper()
	tk := taskfile.Task{TaskID: id, Model: model, Content: "Describe the attached files for " + id, Attachments: paths}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(r.Dir, id+".yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := r.Run("submit", p)
	return code, errOut
}

// Issue 43 (attachments in) through `spoolgate run` on the API lane: a
// vision model gets the image as an image_url part whose data URL holds
// the file's bytes exactly, and the text file inlined, named and fenced;
// the command line refuses a PDF for it with the one-line reason, and
// intake refuses a drop with ".." in a path, its bytes kept.
func TestE2E_AttachAPI(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey})
	tail := rig.APIModels(stand.URL()) + "  - {name: api-eyes, kind: api, baseURL: \"" + stand.URL() + "\", model: eyes, apiKeyEnv: E2E_API_KEY, timeout: 10s, vision: true}\n"
	r := rig.New(t, rig.Opts{Tail: tail}, "E2E_API_KEY="+rig.APIKey)
	e2eAttachFiles(t, r)

	if code, errOut := e2eSubmitFile(t, r, "seen", "api-eyes", "ref.jpg", "说明.txt"); code != 0 {
		t.Fatalf("submit: exit %d: %s", code, errOut)
	}
	code, errOut := e2eSubmitFile(t, r, "pdf", "api-eyes", "sheet.pdf")
	if code == 0 || !strings.Contains(errOut, "attachments: model api-eyes takes no PDF attachments") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("submit of a PDF to an api model: exit %d, stderr %q", code, errOut)
	}
	// A drop made by hand, not through submit: intake refuses it.
	drop := []byte("taskId: escape\nmodel: api-eyes\ncontent: x\nattachments: [../../../etc/passwd]\n")
	if err := os.WriteFile(filepath.Join(r.L.Lane(taskfile.KindAPI, taskfile.DirIncoming), "escape.yaml"), drop, 0o640); err != nil {
		t.Fatal(err)
	}

	r.Start()
	done := r.Final(taskfile.KindAPI, "seen", 20*time.Second)
	if done.State != taskfile.StateSuccess {
		t.Fatalf("seen: %s %s: %s", done.State, done.ErrorClass, done.Error)
	}
	var got *apistand.Request
	for _, q := range stand.Requests() {
		if strings.Contains(q.User, "for seen") {
			q := q
			got = &q
		}
	}
	if got == nil {
		t.Fatalf("the stand-in never got task seen: %+v", stand.Requests())
	}
	want := "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(e2eJPEG)
	if len(got.Images) != 1 || got.Images[0] != want {
		t.Fatalf("image parts: got %d, the first %.60q…; want the JPEG's data URL", len(got.Images), strings.Join(got.Images, ","))
	}
	if !strings.Contains(got.User, "Attached file 说明.txt:\n````\n"+strings.TrimSuffix(string(e2eText), "\n")+"\n````") {
		t.Fatalf("the text file is not inlined, named and fenced: %q", got.User)
	}

	failed := r.L.Lane(taskfile.KindAPI, taskfile.DirFailed)
	testkit.WaitFS(t, "the escaping drop rejected", 10*time.Second, []string{failed}, func() bool {
		_, err := os.Stat(filepath.Join(failed, taskfile.ReasonFileName("escape")))
		return err == nil
	})
	reason, _ := os.ReadFile(filepath.Join(failed, taskfile.ReasonFileName("escape")))
	kept, _ := os.ReadFile(filepath.Join(failed, "escape.yaml"))
	if !strings.Contains(string(reason), `attachments: "../../../etc/passwd" contains ".."`) || !bytes.Equal(kept, drop) {
		t.Fatalf("reason %q; kept bytes equal: %v", reason, bytes.Equal(kept, drop))
	}
}

// Issue 43 (attachments in) through `spoolgate run` on the web lane, a
// real headless Chromium on the chat stand-in: three tasks with 1, 3 and 0
// attachments. The paperclip button's file chooser is intercepted (no OS
// dialog), the files go in through the page's own file input, and the
// stand-in receives each file once, byte for byte (its SHA-256), with the
// message it belongs to; each attempt's record lists what it attached.
func TestE2E_AttachWeb(t *testing.T) {
	t.Parallel()
	w := e2eNewWeb(t, rig.Opts{}, 0.01, "")
	e2eAttachFiles(t, w.Rig)
	sums := map[string]string{}
	for name, b := range map[string][]byte{"ref.jpg": e2eJPEG, "sheet.pdf": e2ePDF, "说明.txt": e2eText} {
		sums[name] = e2eSHA(b)
	}
	tasks := []struct {
		id    string
		files []string
	}{{"one", []string{"ref.jpg"}}, {"three", []string{"ref.jpg", "sheet.pdf", "说明.txt"}}, {"none", nil}}
	for _, tk := range tasks {
		if code, errOut := e2eSubmitFile(t, w.Rig, tk.id, "chat-web", tk.files...); code != 0 {
			t.Fatalf("submit %s: exit %d: %s", tk.id, code, errOut)
		}
	}
	w.Start()
	for _, tk := range tasks {
		done := w.Final(taskfile.KindWeb, tk.id, 60*time.Second)
		if done.State != taskfile.StateSuccess {
			t.Fatalf("%s: %s %s: %s\n%s", tk.id, done.State, done.ErrorClass, done.Error, w.TaskLog(taskfile.KindWeb, tk.id))
		}
		last := done.Attempts[len(done.Attempts)-1]
		if want := strings.Join(tk.files, ", "); last.Attached != want {
			t.Errorf("%s: the attempt record lists attached %q, want %q", tk.id, last.Attached, want)
		}
		var msg *chatstand.Message
		for _, m := range w.stand.Received() {
			if strings.Contains(m.Content, "for "+tk.id) && m.Refused == "" {
				m := m
				msg = &m
			}
		}
		if msg == nil {
			t.Fatalf("%s: the stand-in never got its message", tk.id)
		}
		var want []string
		for _, f := range tk.files {
			want = append(want, sums[f])
		}
		if strings.Join(msg.Files, ",") != strings.Join(want, ",") {
			t.Errorf("%s: the message carried files %v, want %v", tk.id, msg.Files, want)
		}
	}
	// Each file received once per task that carried it, byte for byte.
	ups := w.stand.Uploads()
	count := map[string]int{}
	for _, u := range ups {
		if sums[u.Name] != u.SHA256 {
			t.Errorf("upload %s: SHA-256 %s, want %s (%d bytes)", u.Name, u.SHA256, sums[u.Name], u.Size)
		}
		count[u.Name]++
	}
	if len(ups) != 4 || count["ref.jpg"] != 2 || count["sheet.pdf"] != 1 || count["说明.txt"] != 1 {
		t.Fatalf("uploads: %+v; want ref.jpg twice, sheet.pdf and 说明.txt once", ups)
	}
}

func e2eSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

package attach

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// FuzzCheck: whatever path a submitter writes and whatever bytes a file
// holds, Check never panics, refuses with one line that names the field,
// and accepts only a regular file inside the task's folder or files/,
// recorded under its own name with its size.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"ref.jpg", "说明.txt", "../x", "a/../../b", `a\..\b`, "/etc/passwd", "sub/ref.jpg", "", " ", "a\x00b", "./ref.jpg", "sub//ref.jpg", "link"} {
		f.Add(s, []byte("%PDF-1.4 x"))
		f.Add(s, []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2})
		f.Add(s, []byte("plain text\n"))
	}
	base := f.TempDir()
	task, files := filepath.Join(base, "incoming"), filepath.Join(base, "files")
	for _, d := range []string{task, filepath.Join(files, "sub")} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(files, "link")); err != nil {
		f.Fatal(err)
	}
	cfg, err := config.ParseConfig([]byte("models:\n  - {name: chat, kind: web, site: s}\n  - {name: api, kind: api, baseURL: \"http://127.0.0.1:9/v1\", vision: true}\nsites:\n  s: {url: \"http://127.0.0.1:9/\", input: a, send: b, answer: c, upload: d, attached: e}\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string, data []byte) {
		for _, name := range []string{"ref.jpg", "说明.txt", filepath.Join("sub", "ref.jpg")} {
			if err := os.WriteFile(filepath.Join(files, name), data, 0o640); err != nil {
				t.Fatal(err)
			}
		}
		for _, model := range []string{"chat", "api"} {
			tk := &taskfile.Task{Model: model, Attachments: []string{p}}
			got, rej := Check(cfg, tk, Dirs{Task: task, Files: files})
			if rej != nil {
				if !strings.HasPrefix(rej.Msg, "attachments: ") || strings.ContainsAny(rej.Msg, "\n\r") {
					t.Fatalf("%q: reason %q", p, rej.Msg)
				}
				continue
			}
			if len(got) != 1 {
				t.Fatalf("%q: %d records", p, len(got))
			}
			a := got[0]
			inside := strings.HasPrefix(a.Path, task+string(filepath.Separator)) || strings.HasPrefix(a.Path, files+string(filepath.Separator))
			fi, err := os.Lstat(a.Path)
			if !inside || err != nil || !fi.Mode().IsRegular() || a.Name != filepath.Base(a.Path) || a.Size != len(data) || KindOf(a.Type) == "" {
				t.Fatalf("%q accepted as %+v (inside %v, %v)", p, a, inside, err)
			}
		}
	})
}

// FuzzSniff: any name and bytes give a type KindOf knows, or one it
// refuses; a name never makes bytes that are not a zip or OLE2 file an
// Office file.
func FuzzSniff(f *testing.F) {
	f.Add("a.docx", []byte("PK\x03\x04rest"))
	f.Add("a.doc", append(append([]byte{}, ole2...), 0, 1))
	f.Add("a.docx", []byte("plain text"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		mime := Sniff(name, data)
		if KindOf(mime) == config.AttachOffice && !strings.HasPrefix(string(data), "PK") && !strings.HasPrefix(string(data), string(ole2)) {
			t.Fatalf("%q as %s: an Office type for bytes that are no zip or OLE2 file", name, mime)
		}
	})
}

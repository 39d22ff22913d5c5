//go:build unix

package spool

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A JPEG's first bytes are enough for the sniffer.
var (
	jpegBytes = append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, bytes.Repeat([]byte{7}, 64)...)
	pdfBytes  = []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
)

const attachConfigYAML = `
models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: eyes, kind: api, baseURL: "http://127.0.0.1:9/v1", vision: true}
  - {name: chat, kind: web, site: up}
  - {name: plain, kind: web, site: s}
sites:
  s: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .a}
  up: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .a, upload: "input[type=file]", attached: .chip}
attachments: {maxBytes: 4096, roots: [ROOT]}
`

// newAttachStore is a Store whose config allows attachments up to 4 KiB,
// with an extra root; it returns the store and that root.
func newAttachStore(t *testing.T) (*Store, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "shared")
	if err := os.Mkdir(root, 0o750); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.ParseConfig([]byte(strings.Replace(attachConfigYAML, "ROOT", root, 1)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = filepath.Join(base, "spool")
	cfg.Settle = config.Duration(50 * time.Millisecond)
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(attach.FilesFolder(s.Layout.Root), 0o750); err != nil {
		t.Fatal(err)
	}
	return s, root
}

// Intake refuses a task whose attachments are missing, too large, linked
// out of their folder, escaping it, or of a type its model does not take,
// each with a one-line reason and the drop's bytes untouched; and records
// name, type, size and SHA-256 of the ones it takes.
func TestStore_IntakeAttachments(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("not yours"), 0o640); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		model  string
		paths  string // the YAML list
		setup  func(t *testing.T, files, incoming, root string)
		reason string // "" accepted
	}{
		{name: "missing", model: "chat", paths: "[nothere.jpg]", reason: `attachments: "nothere.jpg" not found (looked in `},
		{name: "over the limit", model: "chat", paths: "[big.txt]", setup: func(t *testing.T, files, _, _ string) {
			writeFile(t, filepath.Join(files, "big.txt"), bytes.Repeat([]byte("a"), 5000))
		}, reason: `attachments: "big.txt" is 5000 bytes, over attachments.maxBytes (4096)`},
		{name: "symlink out of its root", model: "chat", paths: "[leak.txt]", setup: func(t *testing.T, files, _, _ string) {
			if err := os.Symlink(outside, filepath.Join(files, "leak.txt")); err != nil {
				t.Fatal(err)
			}
		}, reason: "which is a symlink: attachments are never read through links"},
		{name: "folder linked out", model: "chat", paths: "[sub/secret.txt]", setup: func(t *testing.T, files, _, _ string) {
			if err := os.Symlink(filepath.Dir(outside), filepath.Join(files, "sub")); err != nil {
				t.Fatal(err)
			}
		}, reason: "which is a symlink"},
		{name: "dotdot", model: "chat", paths: "[../../secret.txt]", reason: `contains ".."`},
		{name: "dotdot in the middle", model: "chat", paths: `['a\..\..\x.txt']`, reason: `contains ".."`},
		{name: "absolute outside every root", model: "chat", paths: "[" + outside + "]", reason: "is not under the spool's files/ or a folder of attachments.roots"},
		{name: "pdf to a text model", model: "fast", paths: "[sheet.pdf]", setup: func(t *testing.T, files, _, _ string) {
			writeFile(t, filepath.Join(files, "sheet.pdf"), pdfBytes)
		}, reason: "attachments: model fast takes no PDF attachments"},
		{name: "image to a model without vision", model: "fast", paths: "[ref.jpg]", setup: func(t *testing.T, files, _, _ string) {
			writeFile(t, filepath.Join(files, "ref.jpg"), jpegBytes)
		}, reason: "model fast takes no image attachments"},
		{name: "site without upload", model: "plain", paths: "[ref.jpg]", setup: func(t *testing.T, files, _, _ string) {
			writeFile(t, filepath.Join(files, "ref.jpg"), jpegBytes)
		}, reason: "model plain takes no attachments: its site s has no `upload:` key"},
		{name: "binary", model: "chat", paths: "[x.bin]", setup: func(t *testing.T, files, _, _ string) {
			writeFile(t, filepath.Join(files, "x.bin"), []byte{0, 1, 2, 3, 0xff, 0xfe})
		}, reason: "is not an image, PDF, Office file or UTF-8 text"},
		{name: "same name twice", model: "chat", paths: "[a/n.txt, b/n.txt]", setup: func(t *testing.T, files, _, _ string) {
			writeFile(t, filepath.Join(files, "a", "n.txt"), []byte("one"))
			writeFile(t, filepath.Join(files, "b", "n.txt"), []byte("two"))
		}, reason: "have the same name n.txt"},
		{name: "web takes all three", model: "chat", paths: "[ref.jpg, sheet.pdf, 说明.txt]", setup: func(t *testing.T, files, incoming, _ string) {
			writeFile(t, filepath.Join(files, "ref.jpg"), jpegBytes)
			writeFile(t, filepath.Join(files, "sheet.pdf"), pdfBytes)
			writeFile(t, filepath.Join(incoming, "说明.txt"), []byte("写一段文案"))
		}},
		{name: "vision takes an image under a root", model: "eyes", paths: "[ROOT/ref.jpg]", setup: func(t *testing.T, _, _, root string) {
			writeFile(t, filepath.Join(root, "ref.jpg"), jpegBytes)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, root := newAttachStore(t)
			m, _ := s.Cfg.Model(tt.model)
			dir := s.Layout.Lane(m.Kind, taskfile.DirIncoming)
			if tt.setup != nil {
				tt.setup(t, attach.FilesFolder(s.Layout.Root), dir, root)
			}
			body := []byte("model: " + tt.model + "\ncontent: x\nattachments: " + strings.ReplaceAll(tt.paths, "ROOT", root) + "\n")
			writeFile(t, filepath.Join(dir, "a.yaml"), body)
			res, err := s.Intake(dir, "a.yaml", m.Kind)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason == "" {
				if res.Outcome != Accepted {
					t.Fatalf("outcome %v, reason %q", res.Outcome, res.Reason)
				}
				checkRecorded(t, s, m.Kind, res.Task)
				return
			}
			if res.Outcome != Rejected || !strings.Contains(res.Reason, tt.reason) || strings.Contains(res.Reason, "\n") {
				t.Fatalf("outcome %v, reason %q: want a rejection with %q", res.Outcome, res.Reason, tt.reason)
			}
			if got, err := os.ReadFile(res.Path); err != nil || !bytes.Equal(got, body) {
				t.Fatalf("the drop's bytes in failed/: %q, %v", got, err)
			}
		})
	}
}

// checkRecorded: the pending file records every attachment with its
// name, sniffed type, size and SHA-256, and survives a read back.
func checkRecorded(t *testing.T, s *Store, lane taskfile.Kind, tk *taskfile.Task) {
	t.Helper()
	data, err := os.ReadFile(s.Layout.TaskPath(lane, taskfile.DirPending, tk.TaskID))
	if err != nil {
		t.Fatal(err)
	}
	back, err := taskfile.DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.AttachmentsChecked) != len(back.Attachments) || len(back.Attachments) == 0 {
		t.Fatalf("recorded %d of %d attachments:\n%s", len(back.AttachmentsChecked), len(back.Attachments), data)
	}
	for _, a := range back.AttachmentsChecked {
		b, err := os.ReadFile(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if a.SHA256 != hex.EncodeToString(sum[:]) || a.Size != len(b) || a.Name != filepath.Base(a.Path) || attach.KindOf(a.Type) == "" {
			t.Errorf("record %+v does not describe %s", a, a.Path)
		}
	}
	loaded, err := attach.Load(back, s.Cfg.Attachments.MaxBytes)
	if err != nil || len(loaded) != len(back.Attachments) {
		t.Fatalf("Load: %d, %v", len(loaded), err)
	}
	// A file edited after intake is caught before it is sent.
	writeFile(t, back.AttachmentsChecked[0].Path, []byte("edited on the share"))
	if _, err := attach.Load(back, s.Cfg.Attachments.MaxBytes); err == nil || !strings.Contains(err.Error(), "changed since intake") {
		t.Fatalf("Load of an edited file: %v", err)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o640); err != nil {
		t.Fatal(err)
	}
}

//go:build unix

package spool

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

const testConfigYAML = `
models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: s}
sites:
  s: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .a}
`

func newTestStore(t *testing.T) *Store {
	t.Helper()
	cfg, err := config.ParseConfig([]byte(testConfigYAML))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = filepath.Join(t.TempDir(), "spool")
	cfg.Settle = config.Duration(50 * time.Millisecond)
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	return s
}

// Every rejection keeps the drop's bytes in failed/ and writes one line
// naming the cause beside it.
func TestStore_IntakeRejects(t *testing.T) {
	big := "model: fast\ncontent: " + strings.Repeat("a", taskfile.MaxTaskSize) + "\n"
	tests := []struct {
		name   string
		lane   taskfile.Kind // folder dropped in ("" = lane-less)
		file   string
		body   string
		make   func(t *testing.T, path string) // instead of body
		reason string
	}{
		{name: "syntax", lane: taskfile.KindAPI, file: "s.yaml", body: "model: fast\ncontent: [oops\n", reason: "yaml: line"},
		{name: "unknown field", lane: taskfile.KindAPI, file: "u.yaml", body: "model: fast\ncontent: x\nprio: 1\n", reason: "field prio not found"},
		{name: "no content", lane: taskfile.KindAPI, file: "c.yaml", body: "model: fast\n", reason: "content: missing"},
		{name: "bad priority", lane: taskfile.KindAPI, file: "p.yaml", body: "model: fast\ncontent: x\npriority: urgent\n", reason: `priority: "urgent" is not high, normal or low`},
		{name: "no model", lane: taskfile.KindAPI, file: "m.yaml", body: "content: x\n", reason: "model: missing"},
		{name: "unknown model", lane: taskfile.KindAPI, file: "um.yaml", body: "model: gpt9\ncontent: x\n", reason: `model: "gpt9" is not in the config`},
		{name: "other lane's model", lane: taskfile.KindAPI, file: "ol.yaml", body: "model: chat\ncontent: x\n", reason: "is a web model, not for the api lane"},
		{name: "modelKind mismatch", lane: taskfile.KindWeb, file: "mk.yaml", body: "modelKind: api\nmodel: chat\ncontent: x\n", reason: `modelKind: "api" does not match the web lane`},
		{name: "taskId with slash", lane: taskfile.KindAPI, file: "t1.yaml", body: "taskId: a/b\nmodel: fast\ncontent: x\n", reason: "taskId:"},
		{name: "taskId dotdot", lane: taskfile.KindAPI, file: "t2.yaml", body: "taskId: ../../x\nmodel: fast\ncontent: x\n", reason: "taskId:"},
		{name: "taskId too long", lane: taskfile.KindAPI, file: "t3.yaml", body: "taskId: " + strings.Repeat("x", taskfile.MaxTaskIDBytes+1) + "\nmodel: fast\ncontent: x\n", reason: "bytes long"},
		{name: "taskId Windows device", lane: taskfile.KindAPI, file: "t5.yaml", body: "taskId: com1.report\nmodel: fast\ncontent: x\n", reason: "device name on Windows"},
		{name: "file name Windows device", lane: taskfile.KindAPI, file: "NUL.yaml", body: "model: fast\ncontent: x\n", reason: "device name on Windows"},
		{name: "taskId with an escape", lane: taskfile.KindAPI, file: "t6.yaml", body: "taskId: \"a\\e[2J\"\nmodel: fast\ncontent: x\n", reason: "U+001B"},
		{name: "batch with an escape", lane: taskfile.KindAPI, file: "b1.yaml", body: "model: fast\ncontent: x\nbatch: \"\\e[2J\\e[31mred\"\n", reason: "batch: contains the control character U+001B (ESC)"},
		{name: "batch with NUL", lane: taskfile.KindAPI, file: "b2.yaml", body: "model: fast\ncontent: x\nbatch: \"a\\0b\"\n", reason: "batch: contains the control character U+0000 (NUL)"},
		{name: "content with an escape", lane: taskfile.KindAPI, file: "c1.yaml", body: "model: fast\ncontent: \"hi \\e]0;title\\a\"\n", reason: "content: contains the control character U+001B (ESC) at character 4: only tab and newline"},
		{name: "content with NUL", lane: taskfile.KindAPI, file: "c2.yaml", body: "model: fast\ncontent: \"a\\0\"\n", reason: "content: contains the control character U+0000"},
		{name: "content with C1 CSI", lane: taskfile.KindAPI, file: "c3.yaml", body: "model: fast\ncontent: \"a\\x9b2J\"\n", reason: "U+009B"},
		{name: "prompt with a bell", lane: taskfile.KindAPI, file: "p1.yaml", body: "model: fast\ncontent: x\nprompt: \"\\a\"\n", reason: "prompt: contains"},
		{name: "model with a tab", lane: taskfile.KindAPI, file: "m1.yaml", body: "model: \"fa\\tst\"\ncontent: x\n", reason: "model: contains the control character U+0009 (tab)"},
		{name: "output with a tab", lane: taskfile.KindAPI, file: "o3.yaml", body: "model: fast\ncontent: x\noutput: \"a\\tb.txt\"\n", reason: "output: contains"},
		{name: "UTF-16 without BOM", lane: taskfile.KindAPI, file: "u16.yaml", body: "m\x00o\x00d\x00e\x00l\x00:\x00 \x00f\x00a\x00s\x00t\x00\n\x00", reason: "UTF-16 LE without a byte-order mark"},
		{name: "GBK", lane: taskfile.KindAPI, file: "gbk.yaml", body: "model: fast\ncontent: \xb4\xba\xbc\xbe\xb9\xe3\xb8\xe6\n", reason: "GBK/GB18030"},
		{name: "binary", lane: taskfile.KindAPI, file: "bin.yaml", body: "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00", reason: "binary data"},
		{name: "UTF-32", lane: taskfile.KindAPI, file: "u32.yaml", body: "\xff\xfe\x00\x00m\x00\x00\x00", reason: "UTF-32"},
		{name: "taskId blank", lane: taskfile.KindAPI, file: "t4.yaml", body: "taskId: ' '\nmodel: fast\ncontent: x\n", reason: "taskId:"},
		{name: "output absolute", lane: taskfile.KindAPI, file: "o1.yaml", body: "model: fast\ncontent: x\noutput: /etc/x\n", reason: "output:"},
		{name: "output escapes", lane: taskfile.KindAPI, file: "o2.yaml", body: "model: fast\ncontent: x\noutput: ../../../etc/cron.d/x\n", reason: "escapes"},
		{name: "too large", lane: taskfile.KindAPI, file: "big.yaml", body: big, reason: "over the 1048576 byte limit"},
		{name: "not utf8", lane: taskfile.KindAPI, file: "u8.yaml", body: "model: fast\ncontent: \xff\n", reason: "not valid UTF-8"},
		{name: "alias bomb", lane: taskfile.KindAPI, file: "ab.yaml", body: "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ncontent: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\n", reason: "yaml:"},
		{name: "directory", lane: taskfile.KindAPI, file: "d.yaml", make: func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o750); err != nil {
				t.Fatal(err)
			}
		}, reason: "not a regular file (directory)"},
		{name: "symlink", lane: taskfile.KindAPI, file: "l.yaml", make: func(t *testing.T, p string) {
			if err := os.Symlink("/etc/passwd", p); err != nil {
				t.Fatal(err)
			}
		}, reason: "not a regular file (symlink)"},
		{name: "fifo", lane: taskfile.KindAPI, file: "f.yaml", make: func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o640); err != nil {
				t.Fatal(err)
			}
		}, reason: "not a regular file (fifo)"},
		{name: "hard link", lane: taskfile.KindAPI, file: "h.yaml", make: func(t *testing.T, p string) {
			outside := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(outside, []byte("model: fast\ncontent: x\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(outside, p); err != nil {
				t.Fatal(err)
			}
		}, reason: "hard links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			dir := s.Layout.Incoming()
			if tt.lane != "" {
				dir = s.Layout.Lane(tt.lane, taskfile.DirIncoming)
			}
			p := filepath.Join(dir, tt.file)
			if tt.make != nil {
				tt.make(t, p)
			} else if err := os.WriteFile(p, []byte(tt.body), 0o640); err != nil {
				t.Fatal(err)
			}
			res, err := s.Intake(dir, tt.file, tt.lane)
			if err != nil {
				t.Fatal(err)
			}
			// A hard link is first taken for another daemon's move in
			// flight and left alone; it is rejected once it has stayed
			// for settle.
			testkit.Until(5*time.Second, func() bool {
				if res.Outcome != Vanished || tt.name != "hard link" {
					return true
				}
				if res, err = s.Intake(dir, tt.file, tt.lane); err != nil {
					t.Fatal(err)
				}
				return false
			})
			if res.Outcome != Rejected {
				t.Fatalf("outcome %v, want rejected", res.Outcome)
			}
			failed := s.Layout.Lane(res.Lane, taskfile.DirFailed)
			if tt.make == nil {
				got, err := os.ReadFile(filepath.Join(failed, tt.file))
				if err != nil || !bytes.Equal(got, []byte(tt.body)) {
					t.Fatalf("bytes in failed/ not intact (err %v)", err)
				}
			} else if _, err := os.Lstat(filepath.Join(failed, tt.file)); err != nil {
				t.Fatalf("drop not in failed/: %v", err)
			}
			reason, err := os.ReadFile(filepath.Join(failed, taskfile.TrimTaskExt(tt.file)+".error"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(reason), tt.reason) || strings.Count(string(reason), "\n") != 1 {
				t.Fatalf("reason %q, want one line containing %q", reason, tt.reason)
			}
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("drop still in incoming/")
			}
		})
	}
}

func TestStore_IntakeDuplicate(t *testing.T) {
	s := newTestStore(t)
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(in, name), []byte("taskId: dup\nmodel: fast\ncontent: x\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	write("one.yaml")
	if res, err := s.Intake(in, "one.yaml", taskfile.KindAPI); err != nil || res.Outcome != Accepted {
		t.Fatalf("first: %v %v", res, err)
	}
	// Move it to failed/ as a failed task, then drop the same id again.
	if err := s.move(taskfile.KindAPI, taskfile.DirPending, taskfile.DirFailed, "dup"); err != nil {
		t.Fatal(err)
	}
	write("two.yaml")
	res, err := s.Intake(in, "two.yaml", taskfile.KindAPI)
	if err != nil || res.Outcome != Rejected {
		t.Fatalf("second: %+v %v", res, err)
	}
	if !strings.Contains(res.Reason, "api/failed/") || !strings.Contains(res.Reason, "spoolgate retry dup") {
		t.Errorf("reason %q should say where and how to retry", res.Reason)
	}
}

func TestStore_IntakeAccepts(t *testing.T) {
	s := newTestStore(t)
	in := s.Layout.Incoming()
	body := "\xEF\xBB\xBFmodel: chat\r\ncontent: hello\r\nstate: success\r\nattempt: 7\r\nresult: old\r\n"
	if err := os.WriteFile(filepath.Join(in, "routed.yml"), []byte(body), 0o640); err != nil {
		t.Fatal(err)
	}
	res, err := s.Intake(in, "routed.yml", "")
	if err != nil || res.Outcome != Accepted {
		t.Fatalf("%+v %v", res, err)
	}
	got, err := s.Read(taskfile.KindWeb, taskfile.DirPending, "routed")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != taskfile.StatePending || got.Attempt != 0 || got.Result != "" || got.ModelKind != taskfile.KindWeb || got.SubmittedAt.IsZero() {
		t.Errorf("not normalized: %+v", got)
	}
	fi, err := os.Stat(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, "routed"))
	if err != nil || fi.Mode().Perm() != FilePerm {
		t.Errorf("mode %v (%v), want %v", fi.Mode().Perm(), err, FilePerm)
	}
}

func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("a"), 0o640)
	os.WriteFile(b, []byte("b"), 0o640)
	if err := fsx.RenameNoReplace(a, b); !os.IsExist(err) && !strings.Contains(err.Error(), "exists") {
		t.Fatalf("rename over an existing file: %v", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "b" {
		t.Fatal("destination overwritten")
	}
	if err := fsx.RenameNoReplace(filepath.Join(dir, "missing"), filepath.Join(dir, "c")); !os.IsNotExist(fsx.UnwrapLink(err)) {
		t.Fatalf("missing source: %v", err)
	}
	if err := fsx.RenameNoReplace(a, filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
}

func TestStore_WriteFenced(t *testing.T) {
	s := newTestStore(t)
	task := &taskfile.Task{TaskID: "f", ModelKind: taskfile.KindAPI, Model: "fast", Content: "x", State: taskfile.StateRunning, Attempt: 1, Owner: "a:1"}
	if err := putTask(s, taskfile.KindAPI, taskfile.DirRunning, task); err != nil {
		t.Fatal(err)
	}
	hb := task.Clone()
	hb.Result = "beat"
	wrote, err := s.writeFenced(taskfile.KindAPI, taskfile.DirRunning, hb, "a:1", 1, nil)
	if err != nil {
		t.Fatalf("own file: %v", err)
	}
	if want, _ := s.EncodeTask(taskfile.KindAPI, hb); !bytes.Equal(wrote, want) {
		t.Fatalf("writeFenced returned %q, wrote %q", wrote, want)
	}
	// Another owner took it: the write is refused and the record kept.
	other := task.Clone()
	other.Owner, other.Attempt = "b:2", 2
	if err := putTask(s, taskfile.KindAPI, taskfile.DirRunning, other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeFenced(taskfile.KindAPI, taskfile.DirRunning, hb, "a:1", 1, wrote); err == nil {
		t.Fatal("fenced write went through (with the writer's own last bytes as known)")
	}
	if got, _ := s.Read(taskfile.KindAPI, taskfile.DirRunning, "f"); got.Owner != "b:2" {
		t.Fatalf("newer record overwritten: owner %q", got.Owner)
	}
	// The file left running/: the write must not recreate it.
	if err := s.move(taskfile.KindAPI, taskfile.DirRunning, taskfile.DirPending, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeFenced(taskfile.KindAPI, taskfile.DirRunning, hb, "b:2", 2, nil); err == nil {
		t.Fatal("write recreated a moved file")
	}
	if _, err := os.Lstat(s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirRunning, "f")); !os.IsNotExist(err) {
		t.Fatal("running file resurrected")
	}
}

// TestStore_WriteFencedKnown guards the fence's fast path: a record that
// holds exactly the writer's known bytes passes without being decoded (so
// even bytes that would not decode pass), and any other bytes are decoded
// and checked.
func TestStore_WriteFencedKnown(t *testing.T) {
	odd := []byte("taskId: [not a record\n")
	tests := []struct {
		name   string
		known  []byte
		wantOK bool
	}{
		{"known bytes: accepted without a decode", odd, true},
		{"no known bytes: decoded, refused", nil, false},
		{"other known bytes: decoded, refused", []byte("taskId: f\n"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			p := s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirRunning, "f")
			if err := fsx.WriteFileAtomic(p, odd); err != nil {
				t.Fatal(err)
			}
			hb := &taskfile.Task{TaskID: "f", ModelKind: taskfile.KindAPI, Model: "fast", Content: "x", State: taskfile.StateRunning, Attempt: 1, Owner: "a:1"}
			_, err := s.writeFenced(taskfile.KindAPI, taskfile.DirRunning, hb, "a:1", 1, tt.known)
			got, _ := os.ReadFile(p)
			if tt.wantOK {
				if err != nil || bytes.Equal(got, odd) {
					t.Fatalf("err %v, file %q: want the write through", err, got)
				}
				return
			}
			if !errors.Is(err, ErrFenced) || !bytes.Equal(got, odd) {
				t.Fatalf("err %v, file %q: want ErrFenced and the record kept", err, got)
			}
		})
	}
}

// putTask writes a task file as a test's fixture, sealed as a daemon of
// s's installation writes it.
func putTask(s *Store, k taskfile.Kind, dir string, t *taskfile.Task) error {
	data, err := s.EncodeTask(k, t)
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomic(s.Layout.TaskPath(k, dir, t.TaskID), data)
}

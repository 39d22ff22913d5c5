//go:build unix

package shares

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Hostile and careless drops of issue 11: what real people and a hostile
// colleague put in a shared spool. Each is a hostileCase of
// TestReliability_HostileDrops.

// trace is the API fake's call trace so far ("start ID ns" lines).
func (h *hostileEnv) trace() string {
	b, _ := os.ReadFile(filepath.Join(h.d.Trace, "api.trace"))
	return string(b)
}

// doneTask reads a task from api/done/.
func (h *hostileEnv) doneTask(id string) *taskfile.Task {
	h.t.Helper()
	tk, err := spool.ReadTaskFile(h.l.TaskPath(taskfile.KindAPI, taskfile.DirDone, id))
	if err != nil {
		h.t.Fatalf("%s: %v", id, err)
	}
	return tk
}

// encodeUTF16 renders s as UTF-16 with a byte-order mark, as Windows
// Notepad saves "Unicode" (LE) or "Unicode big endian" (BE).
func encodeUTF16(s string, bigEndian bool) []byte {
	var b bytes.Buffer
	for _, u := range append([]uint16{0xFEFF}, utf16.Encode([]rune(s))...) {
		if bigEndian {
			b.Write([]byte{byte(u >> 8), byte(u)})
		} else {
			b.Write([]byte{byte(u), byte(u >> 8)})
		}
	}
	return b.Bytes()
}

// checkUTF8Back checks that a task taken from another encoding was
// rewritten as UTF-8 with its emoji as itself, and ran on its text.
func checkUTF8Back(id, content string) func(h *hostileEnv) {
	return func(h *hostileEnv) {
		raw, err := os.ReadFile(h.l.TaskPath(taskfile.KindAPI, taskfile.DirDone, id))
		if err != nil {
			h.t.Fatal(err)
		}
		if !bytes.HasPrefix(raw, []byte("taskId: "+id+"\n")) || !bytes.Contains(raw, []byte("🌷")) || bytes.Contains(raw, []byte(`\U0001F337`)) {
			h.t.Errorf("%s not rewritten as plain UTF-8:\n%s", id, raw)
		}
		if tk := h.doneTask(id); tk.Content != content || tk.Result != lanestest.Answer(content) {
			h.t.Errorf("%s: content %q result %q", id, tk.Content, tk.Result)
		}
	}
}

// reportedOnce checks that the daemon's log names task id's refused task
// log exactly once, however many lines the task logged.
func (h *hostileEnv) reportedOnce(id string) {
	h.t.Helper()
	n := 0
	for _, line := range strings.Split(h.d.LogText(), "\n") {
		if strings.Contains(line, "task log not written") && strings.Contains(line, "taskId="+id+" ") {
			n++
		}
	}
	if n != 1 {
		h.t.Errorf("the refused log of %s is reported %d times, want once", id, n)
	}
}

func hostileTextCases() []hostileCase {
	const tulip = "郁金香 🌷 tulip"
	notepad := func(id string) string {
		return "taskId: " + id + "\r\nmodel: fast\r\ncontent: " + tulip + "\r\n"
	}
	return []hostileCase{
		{name: "Chinese file name, no taskId", id: "春季广告", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "春季广告.yaml", writeDrop(h.t, h.in, "春季广告.yaml", []byte("model: fast\ncontent: "+tulip+"\n"))
		}, check: func(h *hostileEnv) {
			if _, err := os.Stat(h.l.LogPath(taskfile.KindAPI, "春季广告")); err != nil {
				h.t.Errorf("no task log: %v", err)
			}
		}},
		{name: "Japanese taskId, decomposed kana", id: "広告か\u3099", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "jp.yaml", writeDrop(h.t, h.in, "jp.yaml", []byte("taskId: 広告か\u3099\nmodel: fast\ncontent: x\n"))
		}},
		{name: "UTF-16 LE with BOM (Notepad)", id: "notepad-le", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "le.yaml", writeDrop(h.t, h.in, "le.yaml", encodeUTF16(notepad("notepad-le"), false))
		}, check: checkUTF8Back("notepad-le", tulip)},
		{name: "UTF-16 BE with BOM", id: "notepad-be", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "be.yaml", writeDrop(h.t, h.in, "be.yaml", encodeUTF16(notepad("notepad-be"), true))
		}, check: checkUTF8Back("notepad-be", tulip)},
		{name: "emoji round trip", id: "emoji", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "emoji.yaml", writeDrop(h.t, h.in, "emoji.yaml", []byte("taskId: emoji\nmodel: fast\nbatch: 🌷 spring\ncontent: "+tulip+"\n"))
		}, check: func(h *hostileEnv) {
			checkUTF8Back("emoji", tulip)(h)
			if tk := h.doneTask("emoji"); tk.Batch != "🌷 spring" {
				h.t.Errorf("batch %q", tk.Batch)
			}
		}},
		{name: "UTF-16 without BOM", reject: "UTF-16 LE without a byte-order mark", drop: func(h *hostileEnv) (string, []byte) {
			return "nobom.yaml", writeDrop(h.t, h.in, "nobom.yaml", encodeUTF16("model: fast\ncontent: hello\n", false)[2:])
		}},
		{name: "GBK (Chinese Windows ANSI)", reject: "GBK/GB18030", drop: func(h *hostileEnv) (string, []byte) {
			return "gbk.yaml", writeDrop(h.t, h.in, "gbk.yaml", []byte("model: fast\ncontent: \xb4\xba\xbc\xbe\xb9\xe3\xb8\xe6\n"))
		}},
		{name: "escape and NUL in content", reject: "content: contains the control character U+001B (ESC)", drop: func(h *hostileEnv) (string, []byte) {
			return "ctl.yaml", writeDrop(h.t, h.in, "ctl.yaml", []byte("model: fast\ncontent: \"a\\e]0;title\\a\\0\"\n"))
		}},
		{name: "Windows device name", reject: "device name on Windows", drop: func(h *hostileEnv) (string, []byte) {
			return "CON.yaml", writeDrop(h.t, h.in, "CON.yaml", []byte("model: fast\ncontent: x\n"))
		}},
	}
}

func hostileSpoolCases() []hostileCase {
	return []hostileCase{
		{name: "symlinked task log", id: "logsym", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			victim := filepath.Join(h.outside, "secret.yaml") // the canary file: must not change
			if err := os.Symlink(victim, h.l.LogPath(taskfile.KindAPI, "logsym")); err != nil {
				h.t.Fatal(err)
			}
			return "logsym.yaml", writeDrop(h.t, h.in, "logsym.yaml", taskYAML("logsym", "fast", "log through a link"))
		}, check: func(h *hostileEnv) {
			h.reportedOnce("logsym")
		}},
		{name: "fifo as a task log", id: "logfifo", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			if err := syscall.Mkfifo(h.l.LogPath(taskfile.KindAPI, "logfifo"), 0o644); err != nil {
				h.t.Fatal(err)
			}
			return "logfifo.yaml", writeDrop(h.t, h.in, "logfifo.yaml", taskYAML("logfifo", "fast", "[[duration=100ms]] log to a fifo"))
		}, check: func(h *hostileEnv) { h.reportedOnce("logfifo") }},
		{name: "output naming a folder", reject: "is a directory, not a file", drop: func(h *hostileEnv) (string, []byte) {
			if err := os.MkdirAll(filepath.Join(h.l.Output(), "reports"), 0o750); err != nil {
				h.t.Fatal(err)
			}
			return "outdir.yaml", writeDrop(h.t, h.in, "outdir.yaml", taskYAML("outdir", "fast", "x", "output: reports"))
		}},
		{name: "output of a pending task", reject: "already the output of task api/out-first", drop: func(h *hostileEnv) (string, []byte) {
			dropFile(h.t, h.in, "out-first.yaml", taskYAML("out-first", "fast", "[[duration=1500ms]] first", "output: same.txt"))
			testkit.WaitFS(h.t, "out-first taken", 10*time.Second, []string{h.l.Lane(taskfile.KindAPI, taskfile.DirPending), h.l.Lane(taskfile.KindAPI, taskfile.DirRunning)}, func() bool {
				d := h.l.Locate(taskfile.KindAPI, "out-first")
				return d == taskfile.DirPending || d == taskfile.DirRunning
			})
			return "out-second.yaml", writeDrop(h.t, h.in, "out-second.yaml", taskYAML("out-second", "fast", "second", "output: same.txt"))
		}, check: func(h *hostileEnv) {
			testkit.WaitFS(h.t, "out-first done", 20*time.Second, []string{h.l.Lane(taskfile.KindAPI, taskfile.DirDone)}, func() bool {
				return h.l.Locate(taskfile.KindAPI, "out-first") == taskfile.DirDone
			})
			if b, _ := os.ReadFile(filepath.Join(h.l.Output(), "same.txt")); string(b) != lanestest.Answer("[[duration=1500ms]] first") {
				h.t.Errorf("same.txt = %q", b)
			}
			if strings.Contains(h.trace(), "start out-second ") {
				h.t.Errorf("out-second was run")
			}
		}},
		{name: "output folder swapped for a symlink mid-run", id: "outswap", final: taskfile.DirFailed, drop: func(h *hostileEnv) (string, []byte) {
			swap := filepath.Join(h.l.Output(), "swap")
			if err := os.MkdirAll(swap, 0o750); err != nil {
				h.t.Fatal(err)
			}
			dropFile(h.t, h.in, "outswap.yaml", taskYAML("outswap", "fast", "[[duration=1s]] paid for", "output: swap/x.txt"))
			testkit.WaitFS(h.t, "outswap running", 10*time.Second, []string{h.d.Trace}, func() bool { return strings.Contains(h.trace(), "start outswap ") })
			if err := os.Rename(swap, swap+".real"); err != nil {
				h.t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(h.outside, "target"), swap); err != nil {
				h.t.Fatal(err)
			}
			return "", nil
		}, check: func(h *hostileEnv) {
			tk, err := spool.ReadTaskFile(h.l.TaskPath(taskfile.KindAPI, taskfile.DirFailed, "outswap"))
			if err != nil {
				h.t.Fatal(err)
			}
			if tk.Result != lanestest.Answer("[[duration=1s]] paid for") || tk.ErrorClass != taskfile.ClassPermanent ||
				!strings.Contains(tk.Error, "symlink") || !strings.Contains(tk.Error, "answer is kept") || tk.Attempt != 1 {
				h.t.Errorf("outswap: want failed, permanent, the answer kept, one attempt: %+v", tk)
			}
			if _, err := os.Lstat(filepath.Join(h.outside, "target", "x.txt")); err == nil {
				h.t.Errorf("the answer was written through the swapped folder")
			}
		}},
	}
}

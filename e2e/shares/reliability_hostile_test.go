// The reliability suite drives POSIX signals, mounts and fifos.

//go:build unix

package shares

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// hostileEnv is what each hostile drop case works with: one running
// daemon, its spool, and a folder outside the spool holding a canary.
type hostileEnv struct {
	t       *testing.T
	r       *rig.Rig
	d       *rig.Daemon
	l       spool.Layout
	in      string // api/incoming
	outside string
}

const canary = "CANARY-SECRET-42"

// hostileCase is one drop and the outcome the contract asks for.
type hostileCase struct {
	name string
	// drop creates the drop and returns the file name it used and the
	// bytes to find intact in failed/ (nil: do not compare).
	drop func(h *hostileEnv) (file string, want []byte)
	// reject: the reason's expected substring; "" means accepted.
	reject string
	// accepted tasks: the taskId and the final folder it must reach.
	id, final string
	check     func(h *hostileEnv)
}

func writeDrop(t *testing.T, dir, name string, data []byte) []byte {
	dropFile(t, dir, name, data)
	return data
}

// TestReliability_HostileDrops drops each hostile or broken file into a
// running daemon's incoming/ and checks it ends as the contract says:
// accepted and run, or rejected into failed/ with its bytes intact and a
// one-line NAME.error naming the cause; the daemon still running; nothing
// outside the spool written, and no outside content exposed.
func TestReliability_HostileDrops(t *testing.T) {
	t.Parallel()
	r := rig.New(t, rig.Opts{Fake: true, Settle: 300 * time.Millisecond})
	h := &hostileEnv{t: t, r: r, l: spool.NewLayout(r.Spool), outside: t.TempDir()}
	secret := filepath.Join(h.outside, "secret.yaml")
	secretBytes := []byte("taskId: hard\nmodel: fast\ncontent: " + canary + "\n")
	if err := os.WriteFile(secret, secretBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(h.outside, "target"), 0o750); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, h.outside)
	h.d = r.StartHost(rig.DaemonOpts{Name: "hostile"})
	h.d.WaitReady()
	h.in = h.l.Lane(taskfile.KindAPI, taskfile.DirIncoming)

	cases := []hostileCase{
		{name: "yaml alias bomb", reject: "", drop: func(h *hostileEnv) (string, []byte) {
			var b strings.Builder
			b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
			for c := 'b'; c <= 'k'; c++ {
				fmt.Fprintf(&b, "%c: &%c [", c, c)
				for i := range 9 {
					if i > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(&b, "*%c", c-1)
				}
				b.WriteString("]\n")
			}
			b.WriteString("taskId: bomb\nmodel: fast\ncontent: *k\n")
			return "bomb.yaml", writeDrop(h.t, h.in, "bomb.yaml", []byte(b.String()))
		}},
		{name: "1 GiB sparse file", reject: "over the", drop: func(h *hostileEnv) (string, []byte) {
			p := filepath.Join(h.in, ".big.part")
			head := []byte("taskId: big\nmodel: fast\ncontent: x\n")
			if err := os.WriteFile(p, head, 0o644); err != nil {
				h.t.Fatal(err)
			}
			if err := os.Truncate(p, 1<<30); err != nil {
				h.t.Fatal(err)
			}
			if err := os.Rename(p, filepath.Join(h.in, "big.yaml")); err != nil {
				h.t.Fatal(err)
			}
			return "big.yaml", nil
		}, check: func(h *hostileEnv) {
			p := filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirFailed), "big.yaml")
			fi, err := os.Stat(p)
			if err != nil || fi.Size() != 1<<30 {
				h.t.Errorf("big.yaml in failed/: %v, size %d", err, sizeOf(fi))
			}
			f, err := os.Open(p)
			if err == nil {
				head := make([]byte, 11)
				f.Read(head)
				f.Close()
				if string(head) != "taskId: big" {
					h.t.Errorf("big.yaml head changed: %q", head)
				}
			}
		}},
		{name: "deeply nested yaml", reject: "", drop: func(h *hostileEnv) (string, []byte) {
			data := "taskId: deep\nmodel: fast\ncontent: " + strings.Repeat("[", 50000) + strings.Repeat("]", 50000) + "\n"
			return "deep.yaml", writeDrop(h.t, h.in, "deep.yaml", []byte(data))
		}},
		{name: "binary junk", reject: "", drop: func(h *hostileEnv) (string, []byte) {
			junk := make([]byte, 4096)
			rand.New(rand.NewSource(8)).Read(junk)
			return "junk.yaml", writeDrop(h.t, h.in, "junk.yaml", junk)
		}},
		{name: "symlink to /etc/shadow", reject: "symlink", drop: func(h *hostileEnv) (string, []byte) {
			if err := os.Symlink("/etc/shadow", filepath.Join(h.in, "shadow.yaml")); err != nil {
				h.t.Fatal(err)
			}
			return "shadow.yaml", nil
		}, check: func(h *hostileEnv) {
			target, err := os.Readlink(filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirFailed), "shadow.yaml"))
			if err != nil || target != "/etc/shadow" {
				h.t.Errorf("failed/shadow.yaml: want the symlink itself, moved untouched: %q %v", target, err)
			}
		}},
		{name: "symlink to a folder", reject: "symlink", drop: func(h *hostileEnv) (string, []byte) {
			if err := os.Symlink(filepath.Join(h.outside, "target"), filepath.Join(h.in, "dirlink.yaml")); err != nil {
				h.t.Fatal(err)
			}
			return "dirlink.yaml", nil
		}},
		{name: "fifo", reject: "fifo", drop: func(h *hostileEnv) (string, []byte) {
			if err := syscall.Mkfifo(filepath.Join(h.in, "pipe.yaml"), 0o644); err != nil {
				h.t.Fatal(err)
			}
			return "pipe.yaml", nil
		}},
		{name: "hard link to a file outside", reject: "hard links", drop: func(h *hostileEnv) (string, []byte) {
			if err := os.Link(secret, filepath.Join(h.in, "hard.yaml")); err != nil {
				h.t.Fatal(err)
			}
			return "hard.yaml", secretBytes
		}, check: func(h *hostileEnv) {
			if got, _ := os.ReadFile(secret); !bytes.Equal(got, secretBytes) {
				h.t.Errorf("the outside file changed: %q", got)
			}
		}},
		{name: "taskId escapes", reject: "taskId", drop: func(h *hostileEnv) (string, []byte) {
			return "esc.yaml", writeDrop(h.t, h.in, "esc.yaml", []byte("taskId: ../../x\nmodel: fast\ncontent: hi\n"))
		}},
		{name: "output escapes", reject: "output", drop: func(h *hostileEnv) (string, []byte) {
			return "cron.yaml", writeDrop(h.t, h.in, "cron.yaml", []byte("model: fast\ncontent: hi\noutput: ../../../etc/cron.d/x\n"))
		}, check: func(h *hostileEnv) {
			if _, err := os.Lstat("/etc/cron.d/x"); err == nil {
				h.t.Errorf("/etc/cron.d/x exists")
			}
		}},
		{name: "output through a symlinked folder", reject: "output: \"evil/x.txt\" goes through", drop: func(h *hostileEnv) (string, []byte) {
			if err := os.Symlink(filepath.Join(h.outside, "target"), filepath.Join(h.l.Output(), "evil")); err != nil {
				h.t.Fatal(err)
			}
			return "outsym.yaml", writeDrop(h.t, h.in, "outsym.yaml", taskYAML("outsym", "fast", "through a link", "output: evil/x.txt"))
		}, check: func(h *hostileEnv) {
			// Refused at intake: the model was never called.
			if strings.Contains(h.trace(), "start outsym ") {
				h.t.Errorf("outsym was run")
			}
			if _, err := os.Lstat(filepath.Join(h.outside, "target", "x.txt")); err == nil {
				h.t.Errorf("the answer was written outside the spool through output/evil")
			}
		}},
		{name: "name with spaces", reject: "taskId", drop: func(h *hostileEnv) (string, []byte) {
			return "with space.yaml", writeDrop(h.t, h.in, "with space.yaml", []byte("model: fast\ncontent: hi\n"))
		}},
		{name: "name with a newline", reject: "taskId", drop: func(h *hostileEnv) (string, []byte) {
			return "new\nline.yaml", writeDrop(h.t, h.in, "new\nline.yaml", []byte("model: fast\ncontent: hi\n"))
		}},
		{name: "unicode name with a taskId", id: "uni-ok", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "ünïcødé 名前.yaml", writeDrop(h.t, h.in, "ünïcødé 名前.yaml", taskYAML("uni-ok", "fast", "unicode ✓"))
		}},
		{name: "CRLF line ends", id: "crlf", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "crlf.yaml", writeDrop(h.t, h.in, "crlf.yaml", []byte("taskId: crlf\r\nmodel: fast\r\ncontent: windows text\r\n"))
		}},
		{name: "UTF-8 BOM", id: "bom", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			return "bom.yaml", writeDrop(h.t, h.in, "bom.yaml", []byte("\xEF\xBB\xBFtaskId: bom\r\nmodel: fast\r\ncontent: bom text\r\n"))
		}},
		{name: "file still growing", id: "grow", final: taskfile.DirDone, drop: func(h *hostileEnv) (string, []byte) {
			// Written in place, as a copy onto a share does: ten appends
			// over about a second, each leaving a valid but partial task.
			p := filepath.Join(h.in, "grow.yaml")
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				h.t.Fatal(err)
			}
			fmt.Fprint(f, "taskId: grow\nmodel: fast\ncontent: part0")
			for i := 1; i < 10; i++ {
				time.Sleep(100 * time.Millisecond) // the writer's pace, not synchronization
				fmt.Fprintf(f, " part%d", i)
				if l := spool.NewLayout(h.r.Spool).Locate(taskfile.KindAPI, "grow"); l != "" {
					h.t.Errorf("taken after %d of 10 parts (in %s/)", i, l)
				}
			}
			fmt.Fprint(f, "\n")
			f.Close()
			return "grow.yaml", nil
		}, check: func(h *hostileEnv) {
			tk, err := spool.ReadTaskFile(h.l.TaskPath(taskfile.KindAPI, taskfile.DirDone, "grow"))
			want := "part0 part1 part2 part3 part4 part5 part6 part7 part8 part9"
			if err != nil || tk.Content != want || tk.Result != lanestest.Answer(want) {
				h.t.Errorf("grow: taken before complete: %+v %v", tk, err)
			}
		}},
		{name: "deleted before it settled", drop: func(h *hostileEnv) (string, []byte) {
			p := filepath.Join(h.in, "gone.yaml")
			if err := os.WriteFile(p, []byte("model: fast\ncontent: gone\n"), 0o644); err != nil {
				h.t.Fatal(err)
			}
			deleted := time.Now()
			if err := os.Remove(p); err != nil {
				h.t.Fatal(err)
			}
			// A later drop is taken; by then the watcher has looked for
			// the deleted one at least once (rescan + settle).
			dropFile(h.t, h.in, "after-gone.yaml", taskYAML("after-gone", "fast", "after"))
			testkit.Wait(h.t, "the later drop done and a rescan past", 10*time.Second, func() bool {
				return h.l.Locate(taskfile.KindAPI, "after-gone") == taskfile.DirDone &&
					time.Since(deleted) > h.r.Opts.Rescan+h.r.Opts.Settle
			})

			return "", nil
		}, check: func(h *hostileEnv) {
			for _, d := range taskfile.TaskDirs {
				ents, _ := os.ReadDir(h.l.Lane(taskfile.KindAPI, d))
				for _, e := range ents {
					if strings.HasPrefix(e.Name(), "gone") {
						h.t.Errorf("a deleted drop left %s/%s", d, e.Name())
					}
				}
			}
		}},
		{name: "escape bytes in a batch and a name", reject: "taskId", drop: dropEscapes, check: checkEscapes},
	}
	cases = append(cases, hostileTextCases()...)
	cases = append(cases, hostileSpoolCases()...)
	rejected, tried := 0, 0
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			h.t = t
			defer func() { h.t = nil }()
			tried++
			file, want := c.drop(h)
			switch {
			case c.reject != "" || (c.id == "" && file != ""):
				base := taskfile.TrimTaskExt(file)
				errPath := filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirFailed), base+".error")
				testkit.Wait(t, "rejection of "+c.name, 60*time.Second, func() bool { // a deadline: CI's load once took over 20 s
					_, err := os.Stat(errPath)
					return err == nil
				})

				reason, _ := os.ReadFile(errPath)
				if !strings.HasSuffix(string(reason), "\n") || strings.Count(string(reason), "\n") != 1 {
					t.Errorf(".error is not one line: %q", reason)
				}
				if !strings.Contains(string(reason), c.reject) {
					t.Errorf("reason %q does not name %q", reason, c.reject)
				}
				moved := filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirFailed), file)
				if _, err := os.Lstat(moved); err != nil {
					t.Errorf("the rejected drop is not in failed/: %v", err)
				}
				if want != nil {
					if got, _ := os.ReadFile(moved); !bytes.Equal(got, want) {
						t.Errorf("the rejected drop's bytes changed")
					}
				}
				if _, err := os.Lstat(filepath.Join(h.in, file)); err == nil {
					t.Errorf("the drop is still in incoming/")
				}
				rejected++
				t.Logf("reliability: hostile %-36s rejected: %s", c.name+":", clipLine(strings.TrimSpace(string(reason)), 100))
			case c.id != "":
				testkit.Wait(t, c.id+" final", 20*time.Second, func() bool { return h.l.Locate(taskfile.KindAPI, c.id) == c.final })
				t.Logf("reliability: hostile %-36s accepted, ended in %s/", c.name+":", c.final)
			default:
				t.Logf("reliability: hostile %-36s nothing taken, nothing written", c.name+":")
			}
			if c.check != nil {
				c.check(h)
			}
			h.d.MustBeAlive()
		})
	}
	h.t = t
	// Nothing outside the spool written; no outside content exposed in
	// the spool (but for the rejected hard link itself) or the log.
	if after := snapshot(t, h.outside); after != before {
		t.Errorf("the folder outside the spool changed:\nbefore %s\nafter  %s", before, after)
	}
	filepath.WalkDir(r.Spool, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() || strings.HasSuffix(p, "/failed/hard.yaml") || strings.HasSuffix(p, "/failed/big.yaml") {
			return nil
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(canary)) {
			t.Errorf("outside content exposed in %s", p)
		}
		return nil
	})
	if lg := h.d.LogText(); strings.Contains(lg, canary) || strings.Contains(lg, "root:") {
		t.Errorf("outside content in the daemon's log")
	}
	h.d.MustBeAlive()
	h.d.Stop()
	t.Logf("reliability: hostile drops: %d rejected of %d rejectable tried (%d cases in all), daemon kept running", rejected, rejectable(cases), tried)
}

func rejectable(cs []hostileCase) int {
	n := 0
	for _, c := range cs {
		if c.reject != "" || c.id == "" && c.name != "deleted before it settled" {
			n++
		}
	}
	return n
}

func clipLine(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}

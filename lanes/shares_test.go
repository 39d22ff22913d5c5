//go:build linux

package lanes_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/internal/testkit/smbd"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// shareConfig is a config for a spool at root with a settle long enough
// for the slow writers' pauses (at most 0.3 s between chunks, on a machine
// that the race detector and 50 writers keep busy).
func shareConfig(t *testing.T, root, host string) *config.Config {
	t.Helper()
	return parseConfig(t, root, host, periods{settle: "2s", rescan: "500ms", heartbeat: "100ms", staleAfter: "3s"},
		`models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
`)
}

// shareDaemon is a daemon with the API lane's fake on cfg; it reports each
// final task and rejection on changed.
type shareDaemon struct {
	d       *lanes.Daemon
	store   *spool.Store
	changed chan struct{}
}

func startShareDaemon(t *testing.T, cfg *config.Config) (*shareDaemon, error) {
	t.Helper()
	sd := &shareDaemon{store: spool.NewStore(cfg, nil), changed: make(chan struct{}, 1)}
	poke := func() {
		select {
		case sd.changed <- struct{}{}:
		default:
		}
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sd.d = &lanes.Daemon{Store: sd.store, Log: log,
		Executors: map[taskfile.Kind]attempt.Executor{taskfile.KindAPI: &lanestest.Fake{Quota: cfg.API.Concurrency}},
		Hooks: lanes.Hooks{
			OnFinal:  func(taskfile.Kind, *taskfile.Task) { poke() },
			OnReject: func(taskfile.Kind, string) { poke() },
		}}
	if err := sd.d.Start(context.Background()); err != nil {
		return nil, err
	}
	t.Cleanup(sd.d.Stop)
	return sd, nil
}

// slowWriters is how many drops write at once: 50 under `make
// reliability`; `make test` runs 12, three of each way of writing, so
// every way is still judged on each change.
func slowWriters() int {
	if testkit.Reliability() {
		return 50
	}
	return 12
}

// slowDrop is one task file and how it is written.
type slowDrop struct {
	id   string
	data []byte
	w    testkit.SlowWrite
}

// slowDrops are n drops of 64 KB to 2 MB, each written in place over 2 to
// 6 s in chunks at most 0.3 s apart: plain, with attribute changes,
// preallocated (NUL first), and empty until the end.
func slowDrops(n int, chmod bool) []slowDrop {
	var out []slowDrop
	for i := 0; i < n; i++ {
		size := 64<<10 + i*(2<<20-64<<10)/max(n-1, 1)
		over := 2*time.Second + time.Duration(i%5)*time.Second
		id := fmt.Sprintf("slow-%02d", i)
		var b bytes.Buffer
		fmt.Fprintf(&b, "model: fast\ncontent: |\n")
		for line := 0; b.Len() < size; line++ {
			fmt.Fprintf(&b, "  line %d of %s, written slowly in place as a copy over a slow link does\n", line, id)
		}
		w := testkit.SlowWrite{Chunks: max(int(over/(250*time.Millisecond)), 1), Over: over, Chmod: chmod}
		switch i % 4 {
		case 1:
			w.Prealloc = true
		case 2:
			w.Empty, w.Chunks = true, int(over/(300*time.Millisecond)) // attribute changes only, then all of it
		}
		out = append(out, slowDrop{id: id, data: b.Bytes(), w: w})
	}
	return out
}

// judge waits until every drop is final or the deadline passes, then
// counts: a drop under 1 MiB must be done with its whole content; one over
// must be in failed/ with its whole bytes and a reason. truncated counts
// the drops that ended with less than their bytes (accepted cut short,
// rejected for a part of themselves, or left unjudged).
func judge(t *testing.T, sd *shareDaemon, drops []slowDrop, d time.Duration) (truncated int) {
	t.Helper()
	l := sd.store.Layout
	wants := map[string]*taskfile.Task{}
	for _, dr := range drops {
		if want, err := taskfile.DecodeTask(dr.data); err == nil {
			wants[dr.id] = want
		}
	}
	outcome := func(dr slowDrop) (final, ok bool, why string) {
		if want := wants[dr.id]; want != nil {
			tk, err := sd.store.Read(taskfile.KindAPI, taskfile.DirDone, dr.id)
			if err != nil {
				reason, _ := os.ReadFile(filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirFailed), dr.id+".error"))
				return false, false, "not done: " + strings.TrimSpace(string(reason))
			}
			if tk.Content != want.Content {
				return true, false, fmt.Sprintf("done with %d of %d content bytes", len(tk.Content), len(want.Content))
			}
			return true, true, ""
		}
		failed := l.Lane(taskfile.KindAPI, taskfile.DirFailed)
		got, err := os.ReadFile(filepath.Join(failed, dr.id+".yaml"))
		reason, rerr := os.ReadFile(filepath.Join(failed, dr.id+".error"))
		switch {
		case err != nil || rerr != nil:
			if _, err := sd.store.Read(taskfile.KindAPI, taskfile.DirDone, dr.id); err == nil {
				return true, false, "over 1 MiB, yet done (taken before it was whole)"
			}
			return false, false, "not rejected yet"
		case !bytes.Equal(got, dr.data):
			return false, false, fmt.Sprintf("failed/ holds %d of %d bytes", len(got), len(dr.data))
		case !strings.Contains(string(reason), "limit"):
			return false, false, "rejected for " + strings.TrimSpace(string(reason))
		}
		return true, true, ""
	}
	settled := map[string]bool{} // ok outcomes are final: not read again
	deadline := time.Now().Add(d)
	for {
		all := true
		for _, dr := range drops {
			if settled[dr.id] {
				continue
			}
			if _, ok, _ := outcome(dr); !ok {
				all = false
				break
			}
			settled[dr.id] = true
		}
		if all || time.Now().After(deadline) {
			break
		}
		select { // a final task or a rejection, or a rescan's re-judging
		case <-sd.changed:
		case <-time.After(500 * time.Millisecond):
		}
	}
	for _, dr := range drops {
		if settled[dr.id] {
			continue
		}
		if _, ok, why := outcome(dr); !ok {
			truncated++
			t.Errorf("%s (%d bytes, %+v): %s", dr.id, len(dr.data), dr.w, why)
		}
	}
	return truncated
}

// writeAll runs every drop's writer at once into dir.
func writeAll(t *testing.T, dir string, drops []slowDrop) {
	t.Helper()
	var wg sync.WaitGroup
	for _, dr := range drops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dr.w.Write(filepath.Join(dir, dr.id+".yaml"), dr.data); err != nil {
				t.Errorf("%s: %v", dr.id, err)
			}
		}()
	}
	wg.Wait()
}

// Slow in-place writers on a local disk, with attribute changes between
// chunks: 50 drops of 64 KB to 2 MB over 2 to 6 s, all at once. None is
// taken before it is whole.
func TestShare_SlowWritersLocal(t *testing.T) {
	cfg := shareConfig(t, filepath.Join(t.TempDir(), "spool"), "local")
	sd, err := startShareDaemon(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	drops := slowDrops(slowWriters(), true)
	writeAll(t, sd.store.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), drops)
	n := judge(t, sd, drops, 60*time.Second)
	t.Logf("local disk: %d of %d slow drops truncated", n, len(drops))
}

// The same through Samba: each writer is an SMB client session that puts
// its first chunk and appends the others (smbclient reput: the server
// opens, writes and closes the file for each chunk, updating its
// attributes as it does), and spoolgate watches the server's local folder.
func TestShare_SlowWritersSamba(t *testing.T) {
	root := filepath.Join(t.TempDir(), "spool")
	cfg := shareConfig(t, root, "server")
	sd, err := startShareDaemon(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := smbd.Start(t, map[string]string{"spool": root})
	drops := slowDrops(slowWriters(), false)
	scratch := t.TempDir()
	var wg sync.WaitGroup
	for _, dr := range drops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := filepath.Join(scratch, dr.id+".yaml")
			if err := s.SlowPut("spool", local, "api/incoming/"+dr.id+".yaml", dr.data, dr.w.Chunks, dr.w.Over); err != nil {
				t.Errorf("%s: %v", dr.id, err)
			}
		}()
	}
	wg.Wait()
	n := judge(t, sd, drops, 90*time.Second)
	t.Logf("through Samba: %d of %d slow drops truncated", n, len(drops))
}

// Drops through smbclient, the way scripts on other machines make them: in
// place (put), by tmp+rename through SMB, a burst of 100 in one session,
// and a put from a slow pipe (the file stays empty until the end). Every
// one runs once, with its whole content.
func TestShare_SmbclientDrops(t *testing.T) {
	root := filepath.Join(t.TempDir(), "spool")
	cfg := shareConfig(t, root, "server")
	sd, err := startShareDaemon(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := smbd.Start(t, map[string]string{"spool": root})
	local := t.TempDir()
	var drops []slowDrop
	file := func(id string, lines int) string {
		var b bytes.Buffer
		fmt.Fprintf(&b, "model: fast\ncontent: |\n")
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&b, "  line %d of %s\n", i, id)
		}
		if err := os.WriteFile(filepath.Join(local, id+".yaml"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		drops = append(drops, slowDrop{id: id, data: b.Bytes()})
		return id + ".yaml"
	}
	var cmds []string
	for i := 0; i < 5; i++ {
		n := file(fmt.Sprintf("put-%d", i), 2000)
		cmds = append(cmds, "put "+n+" api/incoming/"+n)
	}
	for i := 0; i < 5; i++ {
		n := file(fmt.Sprintf("renamed-%d", i), 2000)
		cmds = append(cmds, "put "+n+" api/incoming/."+n+".tmp", "rename api/incoming/."+n+".tmp api/incoming/"+n)
	}
	if out, err := s.Client(local, "spool", cmds...); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	burst := filepath.Join(local, "burst")
	os.Mkdir(burst, 0o755)
	for i := 0; i < 100; i++ {
		n := file(fmt.Sprintf("burst-%03d", i), 50)
		os.Rename(filepath.Join(local, n), filepath.Join(burst, n))
	}
	if out, err := s.Client(burst, "spool", "prompt off", "cd api/incoming", "mput *.yaml"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// A slow pipe: smbclient reads it to the end before it writes, so the
	// file on the server stays empty for 3 s, then is whole.
	fifo := filepath.Join(local, "pipe.yaml")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	pipeData := []byte("model: fast\ncontent: |\n" + strings.Repeat("  from a slow pipe\n", 3000))
	drops = append(drops, slowDrop{id: "pipe", data: pipeData})
	// The writer is waited for: if smbclient failed before it opened the
	// fifo, a reader opened here and closed at once releases the writer's
	// open, and its first write then fails and ends it.
	fed := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-fed:
		default:
			if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				r.Close()
			}
			<-fed
		}
	})
	go func() {
		defer close(fed)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for off := 0; off < len(pipeData); off += len(pipeData)/6 + 1 {
			if off > 0 {
				time.Sleep(500 * time.Millisecond) // the pipe's own pace
			}
			if _, err := f.Write(pipeData[off:min(off+len(pipeData)/6+1, len(pipeData))]); err != nil {
				return // the reader is gone: smbclient failed, and says so
			}
		}
	}()
	if out, err := s.Client(local, "spool", "put pipe.yaml api/incoming/pipe.yaml"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if n := judge(t, sd, drops, 60*time.Second); n != 0 {
		t.Errorf("%d of %d smbclient drops did not end whole in done/", n, len(drops))
	}
}

// Two daemons on two smbnetfs mounts of one share: the share has neither
// no-replace rename nor hard links, so no claim is safe, and each daemon
// refuses to start, naming what is missing and what provides it. It never
// gets as far as an error loop.
func TestShare_SmbnetfsTwoDaemons(t *testing.T) {
	smbd.NeedFUSE(t, "smbnetfs")
	share := t.TempDir()
	s := smbd.Start(t, map[string]string{"spool": share})
	for i, host := range []string{"host-a", "host-b"} {
		mnt := s.Mount(t, "spool")
		cfg := shareConfig(t, filepath.Join(mnt, "spool"), host)
		_, err := startShareDaemon(t, cfg)
		if err == nil {
			t.Fatalf("daemon %d started on smbnetfs", i+1)
		}
		for _, want := range []string{"no safe claim protocol", "no-replace rename: EINVAL", "hard links: EPERM", "cifs", "file server itself"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("daemon %d: refusal lacks %q: %v", i+1, want, err)
			}
		}
	}
	// Nothing was claimed or moved: the share holds the layout and the
	// probe's nothing.
	if ents, _ := os.ReadDir(filepath.Join(share, "spool", "api", "running")); len(ents) != 0 {
		t.Errorf("running/ holds %d files", len(ents))
	}
}

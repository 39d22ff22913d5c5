package lanes_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/fsnotify/fsnotify.(*inotify).readEvents"))
}

// testConfig is a config with small periods, rooted in a temp folder.
func testConfig(t *testing.T, extra string) *spool.Config {
	t.Helper()
	dir := t.TempDir()
	if !strings.Contains(extra, "shutdownGrace") {
		extra += "shutdownGrace: 2s\n"
	}
	y := fmt.Sprintf(`
spool: %s
host: testhost
settle: 100ms
rescan: 200ms
heartbeat: 50ms
staleAfter: 400ms
retryBackoff: 10ms
http: "off"
web:
  profiles: %s
  taskTimeout: 20s
models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: standin, account: ops1}
sites:
  standin: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .answer}
%s`, filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), extra)
	cfg, err := spool.ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type rig struct {
	t     *testing.T
	cfg   *spool.Config
	store *spool.Store
	d     *lanes.Daemon
	web   *lanestest.Fake
	api   *lanestest.Fake
}

// start runs a daemon with fresh fakes on cfg and stops it at cleanup.
func start(t *testing.T, cfg *spool.Config) *rig {
	t.Helper()
	r := &rig{t: t, cfg: cfg, web: &lanestest.Fake{Exclusive: true}, api: &lanestest.Fake{Quota: cfg.API.Concurrency}}
	r.store = spool.NewStore(cfg, nil)
	r.startDaemon()
	return r
}

func (r *rig) startDaemon() {
	log := slog.New(slog.NewTextHandler(testWriter{r.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.d = &lanes.Daemon{Store: r.store, Log: log,
		Executors: map[spool.Kind]lanes.Executor{spool.KindWeb: r.web, spool.KindAPI: r.api}}
	if err := r.d.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	d := r.d
	r.t.Cleanup(d.Stop)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	if os.Getenv("SPOOLGATE_TEST_LOG") != "" {
		w.t.Log(string(p))
	}
	return len(p), nil
}

// drop writes a task the way operators should: temp name, then rename.
func drop(t *testing.T, cfg *spool.Config, lane spool.Kind, id, model, content string) {
	t.Helper()
	dir := filepath.Join(cfg.Spool, string(lane), "incoming")
	if lane == "" {
		dir = filepath.Join(cfg.Spool, "incoming")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("taskId: %s\nmodel: %s\ncontent: %q\nbatch: b1\n", id, model, content)
	tmp := filepath.Join(dir, "."+id+".tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, id+".yaml")); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// final returns the final folder and task of id, or "" while not final.
func final(store *spool.Store, k spool.Kind, id string) (string, *spool.Task) {
	for _, d := range []string{spool.DirDone, spool.DirFailed, spool.DirCanceled} {
		if t, err := store.Read(k, d, id); err == nil {
			return d, t
		}
	}
	return "", nil
}

// waitFinal waits until id is in a final folder and returns it.
func waitFinal(t *testing.T, store *spool.Store, k spool.Kind, id string, d time.Duration) (string, *spool.Task) {
	t.Helper()
	var dir string
	var task *spool.Task
	waitFor(t, d, id+" to finish", func() bool { dir, task = final(store, k, id); return dir != "" })
	return dir, task
}

// countFiles counts *.yaml in a lane folder.
func countFiles(t *testing.T, store *spool.Store, k spool.Kind, dir string) int {
	ents, err := os.ReadDir(store.Layout.Lane(k, dir))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".yaml" {
			n++
		}
	}
	return n
}

func removeFile(p string) error {
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

package lanes_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/fsnotify/fsnotify.(*inotify).readEvents"))
}

// periods are the timings of a test's config.
type periods struct{ settle, rescan, heartbeat, staleAfter string }

// small are the periods most of the lanes' tests run with.
var small = periods{settle: "100ms", rescan: "200ms", heartbeat: "50ms", staleAfter: "400ms"}

// parseConfig is the one config of the lanes' tests: the spool at spoolDir
// (default a temp folder), host, the periods p, profiles in a temp folder,
// then body (models:, sites:, accounts:, more top-level keys).
func parseConfig(t *testing.T, spoolDir, host string, p periods, body string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if spoolDir == "" {
		spoolDir = filepath.Join(dir, "spool")
	}
	if !strings.Contains(body, "shutdownGrace") {
		body += "shutdownGrace: 2s\n"
	}
	y := fmt.Sprintf(`
spool: %s
host: %s
settle: %s
rescan: %s
heartbeat: %s
staleAfter: %s
retryBackoff: 10ms
http: "off"
web:
  profiles: %s
  taskTimeout: 20s
%s`, spoolDir, host, p.settle, p.rescan, p.heartbeat, p.staleAfter, filepath.Join(dir, "profiles"), body)
	cfg, err := config.ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testConfig is a config with small periods, an API model fast and a web
// model chat (account ops1), rooted in a temp folder; extra adds keys.
func testConfig(t *testing.T, extra string) *config.Config {
	t.Helper()
	return parseConfig(t, "", "testhost", small, `models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: standin, account: ops1}
sites:
  standin: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .answer}
`+extra)
}

type rig struct {
	t     *testing.T
	cfg   *config.Config
	store *spool.Store
	d     *lanes.Daemon
	web   *lanestest.Fake
	api   *lanestest.Fake
	sig   *signals
}

// start runs a daemon with fresh fakes on cfg and stops it at cleanup. Its
// test signals go to sig, or to a new recorder if sig is nil.
func start(t *testing.T, cfg *config.Config, sig ...*signals) *rig {
	t.Helper()
	r := &rig{t: t, cfg: cfg, web: &lanestest.Fake{Exclusive: true}, api: &lanestest.Fake{Quota: cfg.API.Concurrency}}
	if len(sig) > 0 {
		r.sig = sig[0]
	} else {
		r.sig = newSignals()
	}
	r.store = spool.NewStore(cfg, nil)
	r.startDaemon()
	return r
}

func (r *rig) startDaemon() {
	log := slog.New(slog.NewTextHandler(testWriter{r.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.d = &lanes.Daemon{Store: r.store, Log: log, Hooks: r.sig.hooks(),
		Executors: map[taskfile.Kind]attempt.Executor{taskfile.KindWeb: r.web, taskfile.KindAPI: r.api}}
	if err := r.d.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	select {
	case <-r.d.Started():
	default:
		r.t.Fatal("Daemon.Start returned before Started was closed")
	}
	d := r.d
	r.t.Cleanup(d.Stop)
}

// signals records a daemon's test signals (lanes.Hooks), so that tests
// wait on events, never on the disk.
type signals struct {
	mu       sync.Mutex
	changed  chan struct{} // closed at each event, then replaced
	accepted map[string]bool
	started  map[string]int            // attempts started
	final    map[string]*taskfile.Task // the final record as written
	cancels  map[string]bool           // cancel requests handled
	held     map[string]bool           // "lane: reason"
}

func newSignals() *signals {
	return &signals{changed: make(chan struct{}), accepted: map[string]bool{}, started: map[string]int{},
		final: map[string]*taskfile.Task{}, cancels: map[string]bool{}, held: map[string]bool{}}
}

func key(k taskfile.Kind, id string) string { return string(k) + "/" + id }

func (s *signals) note(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *signals) hooks() lanes.Hooks {
	return lanes.Hooks{
		OnAccept:        func(k taskfile.Kind, t *taskfile.Task) { s.note(func() { s.accepted[key(k, t.TaskID)] = true }) },
		OnAttemptStart:  func(k taskfile.Kind, t *taskfile.Task) { s.note(func() { s.started[key(k, t.TaskID)]++ }) },
		OnFinal:         func(k taskfile.Kind, t *taskfile.Task) { s.note(func() { s.final[key(k, t.TaskID)] = t.Clone() }) },
		OnCancelRequest: func(k taskfile.Kind, id string) { s.note(func() { s.cancels[key(k, id)] = true }) },
		OnHold:          func(k taskfile.Kind, reason string) { s.note(func() { s.held[string(k)+": "+reason] = true }) },
	}
}

// wait blocks until cond (called with the recorder locked) holds, waking
// at each event; it fails the test after d.
// heldWith reports whether a hold reason starts with prefix; call it in
// wait's cond (under s.mu).
func (s *signals) heldWith(prefix string) bool {
	for reason := range s.held {
		if strings.HasPrefix(reason, prefix) {
			return true
		}
	}
	return false
}

func (s *signals) wait(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}

// finals counts the tasks of lane k that reached a final folder.
func (s *signals) finals(k taskfile.Kind) int {
	n := 0
	for key := range s.final {
		if strings.HasPrefix(key, string(k)+"/") {
			n++
		}
	}
	return n
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	if os.Getenv("SPOOLGATE_TEST_LOG") != "" {
		w.t.Log(string(p))
	}
	return len(p), nil
}

// drop writes a task the way operators should: temp name, then rename.
func drop(t *testing.T, cfg *config.Config, lane taskfile.Kind, id, model, content string) {
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

// final returns the final folder and task of id, or "" while not final.
func final(store *spool.Store, k taskfile.Kind, id string) (string, *taskfile.Task) {
	for _, d := range []string{taskfile.DirDone, taskfile.DirFailed, taskfile.DirCanceled} {
		if t, err := store.Read(k, d, id); err == nil {
			return d, t
		}
	}
	return "", nil
}

// waitFinal waits for the signal that id reached a final folder, then
// reads it there.
func waitFinal(t *testing.T, r *rig, k taskfile.Kind, id string, d time.Duration) (string, *taskfile.Task) {
	t.Helper()
	r.sig.wait(t, d, id+" to finish", func() bool { return r.sig.final[key(k, id)] != nil })
	dir, task := final(r.store, k, id)
	if dir == "" {
		t.Fatalf("%s signalled final but is in no final folder (%s)", id, r.store.Layout.Locate(k, id))
	}
	return dir, task
}

// countFiles counts *.yaml in a lane folder.
func countFiles(t *testing.T, store *spool.Store, k taskfile.Kind, dir string) int {
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

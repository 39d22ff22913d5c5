//go:build unix

package shares

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The hostile-spool suite (issue 20): what a careless or hostile colleague
// may leave in every folder spoolgate reads besides the drop boxes (those
// are TestReliability_HostileDrops), planted before `spoolgate run` starts.
// Each case says what the daemon must not do with it: act on it, loop on
// it (a log line at every rescan, a task started and killed), crash, lose
// or double a task. The checks run through the real daemon, its status
// command, its /metrics and its log.
type spoolCase struct {
	name    string
	mustNot string // act, loop, crash, lose, double
	plant   func(h *spoolEnv)
	check   func(h *spoolEnv) // after the batch, nil: the suite's common checks only
}

type spoolEnv struct {
	t       *testing.T
	l       spool.Layout
	outside string
	events  string // the notify command's output
	status  string // `spoolgate status` after the batch
	metrics string
	log     string
	dead    int // a pid of this host that is gone
}

func batchKey(batch string) string {
	s := sha256.Sum256([]byte(batch))
	return hex.EncodeToString(s[:8])
}

func plantFile(t *testing.T, p string, data string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		os.Chtimes(p, mtime, mtime)
	}
}

var future = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

func trustSpoolCases() []spoolCase {
	return []spoolCase{
		{name: "lease generation at MaxInt64", mustNot: "loop (start a1's task and kill it, contend for ever)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, filepath.Join(h.l.Accounts(), "a1.lease.9223372036854775807"), "owner: evil:1\nrenewed: 2099-01-01T00:00:00Z\n", future)
			},
			check: func(h *spoolEnv) {
				if strings.Contains(h.log, "contended") {
					h.t.Errorf("a1 contended")
				}
				if !strings.Contains(h.status, "accounts/a1.lease.9223372036854775807") {
					h.t.Errorf("status does not name the foreign lease")
				}
			}},
		{name: "unsealed lease renewed in 2099", mustNot: "act (hold a2 for longer than staleAfter)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, filepath.Join(h.l.Accounts(), "a2.lease.7"), "owner: evil:1\ntoken: ab\nsince: 2099-01-01T00:00:00Z\nrenewed: 2099-01-01T00:00:00Z\n", future)
			},
			check: func(h *spoolEnv) {
				if !strings.Contains(h.status, "accounts/a2.lease.7") {
					h.t.Errorf("status does not name the foreign lease")
				}
			}},
		{name: "forged hold of a1 until 2099", mustNot: "act (hold a1's tasks)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, filepath.Join(h.l.Accounts(), "a1.held"), "until: 2099-01-01T00:00:00Z\nreason: forged\nsince: 2026-01-01T00:00:00Z\n", time.Time{})
			},
			check: func(h *spoolEnv) {
				if _, err := os.Stat(filepath.Join(h.l.Accounts(), "a1.held")); err != nil {
					h.t.Errorf("the forged hold was deleted: %v", err)
				}
			}},
		{name: "200 holds of accounts not in the config", mustNot: "act (swell status and /metrics)",
			plant: func(h *spoolEnv) {
				for i := range 200 {
					plantFile(h.t, filepath.Join(h.l.Accounts(), fmt.Sprintf("stranger%03d.held", i)), "until: 2099-01-01T00:00:00Z\nreason: x\nsince: 2026-01-01T00:00:00Z\n", time.Time{})
				}
			},
			check: func(h *spoolEnv) {
				if n := strings.Count(h.metrics, "spoolgate_account_held{"); n != 0 {
					h.t.Errorf("%d held-account series", n)
				}
			}},
		{name: "marker of a dead owner with a fabricated event", mustNot: "act (deliver it)",
			plant: func(h *spoolEnv) {
				ev := fmt.Sprintf(`{"owner":"h1:%d","created":"2026-01-01T00:00:00Z","event":{"version":1,"event":"account.loggedOut","id":"x","reason":"log in at http://phish.example/"}}`, h.dead)
				plantFile(h.t, filepath.Join(h.l.Root, "notify", "batches", batchKey("never-existed")+"-1000.json"), ev, time.Time{})
			},
			check: func(h *spoolEnv) {
				if strings.Contains(h.events, "phish") || strings.Contains(h.events, "never-existed") {
					h.t.Errorf("a fabricated event was delivered: %s", h.events)
				}
			}},
		{name: "notify/since in 2099", mustNot: "act (silence every batch.finished)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, filepath.Join(h.l.Root, "notify", "since"), "2099-01-01T00:00:00Z\n", time.Time{})
			},
			check: func(h *spoolEnv) {
				if !strings.Contains(h.events, `"batch":"B"`) {
					h.t.Errorf("batch B was not announced: %q", h.events)
				}
				if !strings.Contains(h.status, "notify/since") {
					h.t.Errorf("status does not name the foreign since")
				}
			}},
		{name: "marker of batch B at MaxInt64", mustNot: "act (silence batch B for ever)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, filepath.Join(h.l.Root, "notify", "batches", batchKey("B")+"-9223372036854775807.json"), `{"owner":"x:1","created":"2026-01-01T00:00:00Z"}`, time.Time{})
			},
			check: func(h *spoolEnv) {
				if !strings.Contains(h.status, batchKey("B")+"-9223372036854775807.json") {
					h.t.Errorf("status does not name the forged marker")
				}
			}},
		{name: "50 unreadable files in web/running", mustNot: "loop (an error per file per rescan), count as running for ever",
			plant: func(h *spoolEnv) {
				for i := range 50 {
					plantFile(h.t, filepath.Join(h.l.Lane(taskfile.KindWeb, taskfile.DirRunning), fmt.Sprintf("junk%02d.yaml", i)), "taskId: [\n", time.Time{})
				}
			},
			check: func(h *spoolEnv) {
				if n := strings.Count(h.log, "running task unreadable"); n != 50 {
					h.t.Errorf("%d lines for 50 unreadable running files, want one each", n)
				}
				if _, err := os.Stat(filepath.Join(h.l.Lane(taskfile.KindWeb, taskfile.DirFailed), "junk07.error")); err != nil {
					h.t.Errorf("an unreadable running file did not reach failed/ with a reason: %v", err)
				}
			}},
		{name: "two running files of one taskId, another host's", mustNot: "crash /metrics (500), double the task",
			plant: func(h *spoolEnv) {
				now := time.Now().UTC().Format(time.RFC3339)
				for _, f := range []string{"dup.yaml", "dup2.yaml"} {
					plantFile(h.t, filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirRunning), f),
						"taskId: dup\nmodel: fast\ncontent: x\nstate: running\nattempt: 1\nowner: other:1\nstartedAt: "+now+"\nheartbeatAt: "+now+"\nsubmittedAt: "+now+"\n", time.Time{})
				}
			}},
		{name: "folders and a fifo in cancel/ and priority/", mustNot: "loop (two errors per rescan), act",
			plant: func(h *spoolEnv) {
				os.MkdirAll(filepath.Join(h.l.Lane(taskfile.KindWeb, taskfile.DirCancel), "full", "x"), 0o750)
				os.MkdirAll(filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirPriority), "full", "x"), 0o750)
				syscall.Mkfifo(filepath.Join(h.l.Lane(taskfile.KindAPI, taskfile.DirCancel), "fifo"), 0o600)
			},
			check: func(h *spoolEnv) {
				if n := strings.Count(h.log, "request folder entry ignored"); n != 3 {
					h.t.Errorf("%d lines for 3 hostile request entries, want one each", n)
				}
			}},
		{name: "paused.HOST made to be pasted", mustNot: "act (suggest a command that runs another)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, filepath.Join(h.l.Lane(taskfile.KindAPI, ""), "paused.x;$(id)"), "", time.Time{})
			},
			check: func(h *spoolEnv) {
				if !strings.Contains(h.status, `--host 'x;$(id)'`) {
					h.t.Errorf("status's suggested command is not quoted")
				}
			}},
		{name: "archive month symlinked outside", mustNot: "act (create folders outside the spool), loop",
			plant: func(h *spoolEnv) {
				fin := time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC)
				plantFile(h.t, h.l.TaskPath(taskfile.KindAPI, taskfile.DirDone, "old"), "taskId: old\nmodel: fast\ncontent: x\nstate: success\nattempt: 1\nfinishedAt: 2025-01-15T00:00:00Z\n", fin)
				os.MkdirAll(h.l.Archive(taskfile.KindAPI), 0o750)
				os.Symlink(h.outside, filepath.Join(h.l.Archive(taskfile.KindAPI), "2025-01"))
			},
			check: func(h *spoolEnv) {
				if ents, _ := os.ReadDir(h.outside); len(ents) != 0 {
					h.t.Errorf("created outside the spool: %v", ents)
				}
				if n := strings.Count(h.log, "archive: left in place"); n > 1 {
					h.t.Errorf("%d archive lines", n)
				}
			}},
		{name: "a running task dated 2099", mustNot: "act (an ETA of 600,000 h)",
			plant: func(h *spoolEnv) {
				plantFile(h.t, h.l.TaskPath(taskfile.KindAPI, taskfile.DirRunning, "late"),
					"taskId: late\nmodel: fast\ncontent: x\nstate: running\nattempt: 1\nowner: other:1\nstartedAt: 2099-01-01T00:00:00Z\nheartbeatAt: 2099-01-01T00:00:00Z\nsubmittedAt: 2026-01-01T00:00:00Z\n", time.Time{})
			},
			check: func(h *spoolEnv) {
				if regexp.MustCompile(`ETA [0-9]{3,}h`).MatchString(h.status) {
					h.t.Errorf("an ETA of hundreds of hours:\n%s", h.status)
				}
			}},
	}
}

func TestReliability_HostileSpool(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	r := rig.New(t, rig.Opts{Fake: true, StaleAfter: time.Second, Accounts: []string{"a1", "a2"}, HTTP: "127.0.0.1:0",
		Tail: fmt.Sprintf("retention: {done: 30d}\nnotify: {command: [/bin/sh, -c, 'cat >> %s; echo >> %s']}\n", events, events)})
	l := spool.NewLayout(r.Spool)
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	h := &spoolEnv{t: t, l: l, outside: t.TempDir(), events: events, dead: gone.Process.Pid}
	cases := trustSpoolCases()
	planted := map[string]bool{}
	for _, c := range cases {
		c.plant(h)
	}
	filepath.WalkDir(l.Root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			planted[p] = true
		}
		return nil
	})
	d := r.StartHost(rig.DaemonOpts{Name: "d", Host: "h1"})
	d.WaitReady()
	started := time.Now()
	metricsURL := ""
	testkit.Wait(t, "the status page's address in the log", 10*time.Second, func() bool {
		m := regexp.MustCompile(`url=(http://127\.0\.0\.1:[0-9]+/)`).FindStringSubmatch(d.LogText())
		if m != nil {
			metricsURL = m[1] + "metrics"
		}
		return m != nil
	})

	scrape := func() string {
		resp, err := http.Get(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("/metrics answered %d: %s", resp.StatusCode, b)
		}
		return string(b)
	}
	scrape() // with the duplicate running files still there
	var ids []string
	// Six web tasks of 600 ms: more than a1 alone can finish before the
	// foreign lease lets a2 go (staleAfter 1 s and a round), so a2 must
	// take some; at 200 ms a fast run let a1 take all six and a2 none.
	for i := range 6 {
		id := fmt.Sprintf("hw%d", i)
		ids = append(ids, id)
		dropFile(t, l.Lane(taskfile.KindWeb, taskfile.DirIncoming), id+".yaml", taskYAML(id, "chat", "web [[duration=600ms]]", "batch: B"))
	}
	for i := range 3 {
		id := fmt.Sprintf("ha%d", i)
		ids = append(ids, id)
		dropFile(t, l.Lane(taskfile.KindAPI, taskfile.DirIncoming), id+".yaml", taskYAML(id, "fast", "api", "batch: B"))
	}
	testkit.Wait(t, "the batch done and announced", 60*time.Second, func() bool {
		d.MustBeAlive()
		for _, id := range ids {
			if l.Locate(taskfile.KindWeb, id) != taskfile.DirDone && l.Locate(taskfile.KindAPI, id) != taskfile.DirDone {
				return false
			}
		}
		ev, _ := os.ReadFile(events)
		return bytes.Contains(ev, []byte(`"batch":"B"`))
	})

	took := time.Since(started)
	// Both accounts drove tasks: no planted lease or hold stopped one.
	calls := readTrace(t, filepath.Join(d.Trace, "web.trace"), 0)
	first := map[string]int64{}
	for _, c := range calls {
		if first[c.account] == 0 || c.start < first[c.account] {
			first[c.account] = c.start
		}
	}
	for _, a := range []string{"a1", "a2"} {
		if first[a] == 0 {
			t.Errorf("account %s ran nothing: a planted file stopped it", a)
		}
	}
	// How long the fresh foreign lease kept a2 idle, by the daemon's own
	// log: from "blocked" to "lease taken". Bound: staleAfter + a round.
	lineAt := func(re string) time.Time {
		m := regexp.MustCompile(`time=(\S+) [^\n]*` + re).FindStringSubmatch(d.LogText())
		if m == nil {
			return time.Time{}
		}
		at, _ := time.Parse(time.RFC3339Nano, m[1])
		return at
	}
	blocked := lineAt(`account blocked by a foreign lease file[^\n]*account=a2`)
	taken := lineAt(`account lease taken[^\n]*account=a2`)
	held := taken.Sub(blocked)
	if blocked.IsZero() || taken.IsZero() || held > time.Second+1500*time.Millisecond {
		t.Errorf("a2 blocked at %v, its lease taken at %v (%s): want within staleAfter 1s and a round", blocked, taken, held)
	}
	// Until the unreadable running files have been moved (staleAfter).
	testkit.Wait(t, "the unreadable running files moved", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(l.Lane(taskfile.KindWeb, taskfile.DirRunning), "junk49.yaml"))
		return os.IsNotExist(err)
	})

	h.metrics = scrape()
	var out bytes.Buffer
	st := exec.Command("spoolgate", "status", "--config", filepath.Join(r.Dir, "d.yaml"))
	st.Stdout, st.Stderr = &out, &out
	st.Env = os.Environ()
	if err := st.Run(); err != nil {
		t.Fatalf("status: %v\n%s", err, out.String())
	}
	h.status = out.String()
	evb, _ := os.ReadFile(events)
	h.events = string(evb)
	d.Stop()
	h.log = d.LogText()
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			h.t = t
			if c.check != nil {
				c.check(h)
			}
			t.Logf("reliability: hostile spool %-50s did not %s", c.name+":", c.mustNot)
		})
	}
	h.t = t
	// Never deleted: every planted file is where it was, or moved into
	// failed/ with a reason (unreadable running files), or reclaimed
	// (another host's stale running files, which are tasks).
	for p := range planted {
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		base := filepath.Base(p)
		if _, err := os.Lstat(filepath.Join(l.Lane(taskfile.KindWeb, taskfile.DirFailed), base)); err == nil {
			continue
		}
		if strings.Contains(p, "/running/") {
			continue // a task another host left: reclaimed as any stale task
		}
		t.Errorf("planted %s is gone", p)
	}
	// No error line repeats: each WARN/ERROR line (its time cut) once.
	seen := map[string]int{}
	for _, line := range strings.Split(h.log, "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") {
			continue
		}
		seen[regexp.MustCompile(`^time=\S+ `).ReplaceAllString(line, "")]++
	}
	for line, n := range seen {
		if n > 1 {
			t.Errorf("repeated %d times in %s: %s", n, took.Round(time.Second), line)
		}
	}
	t.Logf("reliability: hostile spool: %d cases planted, batch of %d done and announced in %s (the foreign lease in 2099 held a2 for %s; staleAfter 1s), %d distinct warning lines, none repeated, /metrics 200", len(cases), len(ids), took.Round(time.Millisecond), held.Round(time.Millisecond), len(seen))
}

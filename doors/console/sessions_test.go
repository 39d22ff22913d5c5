package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The page and /metrics show each web session: its state (a running task,
// a disabled account, an account another host leases, a standby the live
// view reports) and its counts.
func TestHTTPServer_Sessions(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	base := fixture.Spool(t)
	cfg, err := config.ParseConfig([]byte(`
host: testhost
models:
  - {name: writer, kind: api, baseURL: "http://127.0.0.1:1/v1"}
  - {name: thinker, kind: web, site: chat}
sites:
  chat: {url: "http://127.0.0.1:1/", input: textarea, send: button, answer: .a}
accounts:
  a1: {site: chat}
  a2: {site: chat}
  a3: {site: chat}
  a4: {site: chat}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool, cfg.Web.Profiles, cfg.HTTP = base.Spool, base.Web.Profiles, base.HTTP
	L := spool.NewLayout(cfg.Spool)
	now := time.Now().UTC()
	run := taskfile.Task{TaskID: "w9", ModelKind: taskfile.KindWeb, Model: "thinker", State: taskfile.StateRunning, Content: "x", Attempt: 1,
		Account: "a1", SubmittedAt: now.Add(-time.Hour), StartedAt: now.Add(-time.Minute), HeartbeatAt: now.Add(-2 * time.Second), Owner: "testhost:1"}
	data, _ := run.Encode()
	if err := os.WriteFile(L.TaskPath(taskfile.KindWeb, taskfile.DirRunning, "w9"), data, spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(L.Accounts(), "a2.disabled"), nil, spool.FilePerm)
	if _, err := spool.NewStore(cfg, nil).AcquireAccount("a3", "otherhost:5", now); err != nil {
		t.Fatal(err)
	}
	live := func() []taskfile.LaneInfo {
		return []taskfile.LaneInfo{{Kind: taskfile.KindWeb, Concurrency: 4, Sessions: []taskfile.SessionInfo{{Account: "a4", State: taskfile.SessionStandby}}}, {Kind: taskfile.KindAPI, Concurrency: 3}}
	}
	h := startTestHTTP(t, cfg, live)
	defer h.Stop()
	_, body := get(t, h, "/metrics")
	for _, want := range []string{
		`spoolgate_web_session{account="a1",site="chat",state="running"} 1`,
		`spoolgate_web_session{account="a2",site="chat",state="disabled"} 1`,
		`spoolgate_web_session{account="a3",site="chat",state="leased by another host"} 1`,
		`spoolgate_web_session{account="a4",site="chat",state="standby"} 1`,
		`spoolgate_lane_concurrency{lane="web"} 4`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	_, page := get(t, h, "/")
	for _, want := range []string{`data-account="a1" data-state="running"`, "running w9 (heartbeat", `data-account="a3" data-state="leased by another host"`, "otherhost:5"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s\npage:\n%s", body, page)
	}
}

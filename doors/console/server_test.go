package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func webInfo(standby bool) func() []taskfile.LaneInfo {
	return func() []taskfile.LaneInfo {
		return []taskfile.LaneInfo{{Kind: taskfile.KindWeb, Concurrency: 1, Standby: standby, Holder: "pid 77 on other"}, {Kind: taskfile.KindAPI, Concurrency: 3}}
	}
}

func startTestHTTP(t *testing.T, cfg *config.Config, info func() []taskfile.LaneInfo) *httpServer {
	t.Helper()
	h, err := Start(context.Background(), spool.NewStore(cfg, nil), info, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Addr() == nil {
		t.Fatal("not listening")
	}
	return h
}

var testClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

func get(t *testing.T, h *httpServer, path string) (*http.Response, []byte) {
	t.Helper()
	return getIn(t, h, path, "")
}

// getIn is get with the browser's Accept-Language set to lang.
func getIn(t *testing.T, h *httpServer, path, lang string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+h.Addr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestHTTPServer_Metrics(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	hooks := h.Hooks()
	hooks.OnAttemptEnd(taskfile.KindAPI, &taskfile.Task{State: taskfile.StateSuccess}, 12*time.Second)
	hooks.OnAttemptEnd(taskfile.KindAPI, &taskfile.Task{State: taskfile.StatePending}, 3*time.Second)
	hooks.OnAttemptEnd(taskfile.KindWeb, &taskfile.Task{State: taskfile.StateFailed}, 200*time.Second)
	hooks.OnReject(taskfile.KindAPI, "bad")
	hooks.OnReclaim(taskfile.KindWeb, &taskfile.Task{})
	hooks.OnDelivery(taskfile.KindWeb, &taskfile.Task{}, taskfile.Delivery{Attempt: 1, How: taskfile.DeliverySent})
	hooks.OnDelivery(taskfile.KindWeb, &taskfile.Task{}, taskfile.Delivery{Attempt: 2, How: taskfile.DeliveryReattached})
	hooks.OnDelivery(taskfile.KindWeb, &taskfile.Task{}, taskfile.Delivery{Attempt: 2, How: taskfile.DeliveryResent, PossibleDoubleSend: true})

	resp, body := get(t, h, "/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	val := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue next
				}
			}
			switch f.GetType() {
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue(), true
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue(), true
			case dto.MetricType_HISTOGRAM:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"spoolgate_tasks", map[string]string{"lane": "api", "state": "pending"}, 3},
		{"spoolgate_tasks", map[string]string{"lane": "api", "state": "running"}, 1},
		{"spoolgate_tasks", map[string]string{"lane": "api", "state": "success"}, 2},
		{"spoolgate_tasks", map[string]string{"lane": "api", "state": "failed"}, 1},
		{"spoolgate_tasks", map[string]string{"lane": "api", "state": "canceled"}, 0},
		{"spoolgate_tasks", map[string]string{"lane": "web", "state": "pending"}, 2},
		{"spoolgate_tasks", map[string]string{"lane": "web", "state": "success"}, 1},
		{"spoolgate_rejected_drops", map[string]string{"lane": "api"}, 1},
		{"spoolgate_rejected_drops", map[string]string{"lane": "web"}, 0},
		{"spoolgate_incoming_drops", map[string]string{"lane": "web"}, 1},
		{"spoolgate_incoming_drops", map[string]string{"lane": "api"}, 0},
		{"spoolgate_rejected_drops_total", map[string]string{"lane": "api"}, 1},
		{"spoolgate_lane_paused", map[string]string{"lane": "web"}, 1},
		{"spoolgate_lane_paused", map[string]string{"lane": "api"}, 0},
		{"spoolgate_lane_concurrency", map[string]string{"lane": "web"}, 1},
		{"spoolgate_lane_concurrency", map[string]string{"lane": "api"}, 3},
		{"spoolgate_lane_held_tasks", map[string]string{"lane": "web", "reason": "paused"}, 2},
		{"spoolgate_task_attempts_total", map[string]string{"lane": "api", "outcome": "success"}, 1},
		{"spoolgate_task_attempts_total", map[string]string{"lane": "api", "outcome": "retry"}, 1},
		{"spoolgate_task_attempts_total", map[string]string{"lane": "web", "outcome": "failed"}, 1},
		{"spoolgate_task_retries_total", map[string]string{"lane": "api"}, 1},
		{"spoolgate_task_retries_total", map[string]string{"lane": "web"}, 0},
		{"spoolgate_tasks_reclaimed_total", map[string]string{"lane": "web"}, 1},
		{"spoolgate_task_duration_seconds", map[string]string{"lane": "api"}, 2},
		{"spoolgate_task_duration_seconds", map[string]string{"lane": "web"}, 1},
		{"spoolgate_web_deliveries_total", map[string]string{"how": "sent"}, 1},
		{"spoolgate_web_deliveries_total", map[string]string{"how": "reattached"}, 1},
		{"spoolgate_web_deliveries_total", map[string]string{"how": "resent"}, 1},
		{"spoolgate_web_possible_double_sends_total", nil, 1},
		{"spoolgate_web_runner", map[string]string{"state": "held"}, 1},
		{"spoolgate_web_runner", map[string]string{"state": "standby"}, 0},
	} {
		got, ok := val(c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// The api histogram's sum is 12+3 seconds.
	for _, m := range fams["spoolgate_task_duration_seconds"].GetMetric() {
		if m.GetLabel()[0].GetValue() == "api" && m.GetHistogram().GetSampleSum() != 15 {
			t.Errorf("api duration sum = %v", m.GetHistogram().GetSampleSum())
		}
	}
	// Heartbeat ages: a4 beat 3s ago, w2 20s ago (plus test time).
	for id, want := range map[string]float64{"a4": 3, "w2": 20} {
		lane := map[string]string{"a4": "api", "w2": "web"}[id]
		got, ok := val("spoolgate_running_heartbeat_age_seconds", map[string]string{"lane": lane, "task": id})
		if !ok || got < want || got > want+30 {
			t.Errorf("heartbeat age of %s = %v (present %v), want about %v", id, got, ok, want)
		}
	}
	// The api lane's ETA is known; the paused web lane's is not.
	if _, ok := val("spoolgate_lane_eta_seconds", map[string]string{"lane": "api"}); !ok {
		t.Error("no api ETA")
	}
	if _, ok := val("spoolgate_lane_eta_seconds", map[string]string{"lane": "web"}); ok {
		t.Error("web ETA reported while paused")
	}
}

func TestHTTPServer_MetricsStandby(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, fixture.Spool(t), webInfo(true))
	defer h.Stop()
	_, body := get(t, h, "/metrics")
	for _, want := range []string{`spoolgate_web_runner{state="held"} 0`, `spoolgate_web_runner{state="standby"} 1`, `spoolgate_lane_held_tasks{lane="web",reason="standby"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestHTTPServer_APIStatus(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	h := startTestHTTP(t, cfg, webInfo(true))
	defer h.Stop()
	resp, body := get(t, h, "/api/status")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var st status.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	web, api := st.Lanes[0], st.Lanes[1]
	if want := (status.Counts{Pending: 3, Running: 1, Success: 2, Failed: 1, Total: 7}); api.Counts != want || api.Rejected != 1 {
		t.Errorf("api counts %+v rejected %d", api.Counts, api.Rejected)
	}
	if want := (status.Counts{Pending: 2, Running: 1, Success: 1, Total: 4}); web.Counts != want || !web.Paused {
		t.Errorf("web counts %+v paused %v", web.Counts, web.Paused)
	}
	var kinds []string
	for _, hd := range web.Held {
		kinds = append(kinds, hd.Kind)
	}
	if strings.Join(kinds, ",") != "paused,standby" {
		t.Errorf("web held %v", kinds)
	}
	if len(st.Batches) != 2 || st.Batches[0].Batch != "b1" || st.Batches[0].Progress.Finished != 3 || st.Batches[0].Progress.Total != 4 {
		t.Errorf("batches %+v", st.Batches)
	}
	if st.Spool != spool.NewLayout(cfg.Spool).Root {
		t.Errorf("spool %q", st.Spool)
	}
}

func TestHTTPServer_ReadOnly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, fixture.Spool(t), nil)
	defer h.Stop()
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		for _, p := range []string{"/", "/api/status", "/metrics"} {
			req, _ := http.NewRequest(m, "http://"+h.Addr().String()+p, strings.NewReader("x"))
			resp, err := testClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d", m, p, resp.StatusCode)
			}
		}
	}
	if resp, _ := get(t, h, "/nothing"); resp.StatusCode != 404 {
		t.Errorf("/nothing = %d", resp.StatusCode)
	}
	resp, body := get(t, h, "/")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `http-equiv="refresh"`) {
		t.Errorf("/ = %d %.200s", resp.StatusCode, body)
	}
	// Its one script is the server's own console.js (live updates), no
	// inline code and nothing from elsewhere.
	if own := `<script src="/console.js" defer></script>`; strings.Contains(string(body), "http://") || strings.Count(string(body), "<script") != 1 || !strings.Contains(string(body), own) {
		t.Error("page refers to outside assets or runs scripts other than /console.js")
	}
}

// syncBuf is testkit's goroutine-safe buffer.
type syncBuf = testkit.Buffer

func TestStartHTTP_PortInUseOffAndBad(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := fixture.Spool(t)
	cfg.HTTP = ln.Addr().String()
	var logs syncBuf
	h, err := Start(context.Background(), spool.NewStore(cfg, nil), nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("port in use is an error: %v", err)
	}
	if h.Addr() != nil || !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cannot listen") {
		t.Errorf("addr %v, log %q", h.Addr(), logs.String())
	}
	h.Hooks().OnReject(taskfile.KindAPI, "x") // hooks still work
	h.Stop()
	h.Stop()

	cfg.HTTP = "off"
	h, err = Start(context.Background(), spool.NewStore(cfg, nil), nil, nil)
	if err != nil || h.Addr() != nil {
		t.Fatalf("off: %v %v", h.Addr(), err)
	}
	h.Stop()

	cfg.HTTP = "localhost"
	if _, err := Start(context.Background(), spool.NewStore(cfg, nil), nil, nil); err == nil {
		t.Error("malformed address accepted")
	}
}

func TestHTTPServer_StopTwiceAndClosed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h, err := Start(context.Background(), spool.NewStore(fixture.Spool(t), nil), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := h.Addr().String()
	h.Stop()
	h.Stop()
	if _, err := testClient.Get("http://" + addr + "/"); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("server still answers after Stop: %v", err)
	}
}

// An account held by a usage limit shows on /metrics (held, and when the
// hold ends) and on the page with its reason.
func TestHTTPServer_AccountHeld(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	until := time.Now().Add(2 * time.Minute).UTC().Truncate(time.Second)
	st := spool.NewStore(cfg, nil)
	if err := st.HoldAccount(taskfile.Hold{Account: "ops1", Until: until, Reason: "Try again in 2 minutes.", Site: "chat", Wait: "2m0s", Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	_, body := get(t, h, "/metrics")
	for _, want := range []string{`spoolgate_account_held{account="ops1",site="chat"} 1`, fmt.Sprintf(`spoolgate_account_held_until_seconds{account="ops1"} %s`, strconv.FormatFloat(float64(until.Unix()), 'g', -1, 64))} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	_, page := get(t, h, "/")
	if !strings.Contains(string(page), `data-account="ops1"`) || !strings.Contains(string(page), "Try again in 2 minutes.") {
		t.Errorf("the page does not show the held account:\n%s", page)
	}
}

// TestHTTPServer_MetricsHostileRunning: two running files with one taskId,
// and a taskId that is not UTF-8 (a file name of raw bytes), still give a
// 200 with every series, each task once (was a 500 and no series at all).
func TestHTTPServer_MetricsHostileRunning(t *testing.T) {
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	now := time.Now().UTC()
	run := func(name, id string) {
		tk := taskfile.Task{TaskID: id, Model: "writer", ModelKind: taskfile.KindAPI, State: taskfile.StateRunning, Content: "x", Attempt: 1,
			StartedAt: now.Add(-time.Second), HeartbeatAt: now, Owner: "testhost:1", SubmittedAt: now}
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, "running"), name), data, spool.FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	run("dup.yaml", "a4") // a second running file of task a4
	run("dup2.yml", "a4")
	bad := "bad\xff\xfe"
	if err := os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, "running"), bad+".yaml"), []byte("model: writer\ncontent: x\nstate: running\nheartbeatAt: "+now.Format(time.RFC3339)+"\n"), spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	resp, body := get(t, h, "/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	tp := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := tp.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if fams["spoolgate_tasks"] == nil {
		t.Fatal("spoolgate_tasks missing")
	}
	n := 0
	for _, m := range fams["spoolgate_running_heartbeat_age_seconds"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "task" && lp.GetValue() == "a4" {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("task a4 has %d heartbeat series, want 1:\n%s", n, body)
	}
}

// TestHTTPServer_PageForeign: the page lists foreign files by name (a
// lease and a notify marker no daemon of this installation wrote).
func TestHTTPServer_PageForeign(t *testing.T) {
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	os.MkdirAll(L.Accounts(), 0o750)
	os.WriteFile(filepath.Join(L.Accounts(), "ops1.lease.3"), []byte("owner: evil:1\nrenewed: 2099-01-01T00:00:00Z\n"), 0o640)
	os.MkdirAll(filepath.Join(cfg.Spool, "notify", "batches"), 0o750)
	os.WriteFile(filepath.Join(cfg.Spool, "notify", "batches", "0123456789abcdef-1000.json"), []byte(`{"owner":"x:1"}`), 0o640)
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	_, body := get(t, h, "/")
	for _, want := range []string{`class="foreign"`, "accounts/ops1.lease.3", "notify/batches/0123456789abcdef-1000.json"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
}

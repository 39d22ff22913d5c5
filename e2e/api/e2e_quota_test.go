//go:build unix

package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eQuotaModels is a models: section of api models on the stand-in, each
// asking for its own vendor model (so the stand-in counts them apart).
func e2eQuotaModels(url string, models ...string) string {
	var b strings.Builder
	b.WriteString("models:\n")
	for _, m := range models {
		name, quota, _ := strings.Cut(m, " ")
		fmt.Fprintf(&b, "  - {name: %s, kind: api, baseURL: %q, model: vendor-%s, apiKeyEnv: E2E_API_KEY, timeout: 10s%s}\n", name, url, name, quota)
	}
	return b.String()
}

// requestsOf lists the times the stand-in received requests of a vendor
// model, with their statuses.
func requestsOf(s *apistand.Server, model string) (at []time.Time, status []int) {
	for _, q := range s.Requests() {
		if q.Model == model {
			at, status = append(at, q.At), append(status, q.Status)
		}
	}
	return at, status
}

// Per-model quotas through spoolgate run: model A (concurrency 2) and
// model B (concurrency 3) in a lane of 5. The stand-in sees at most 2 of
// A, 3 of B and 5 in all at once; B's tasks, queued behind A's, start
// while A is at its limit.
func TestE2E_Quota_Concurrency(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{Quota: 5, RequireKey: rig.APIKey})
	r := rig.New(t, rig.Opts{APIConc: 5, Tail: e2eQuotaModels(stand.URL(), "a , concurrency: 2", "b , concurrency: 3")}, "E2E_API_KEY="+rig.APIKey)
	d := r.Start()
	var tasks []rig.Task
	for i := range 8 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("a%d", i), Model: "a", Content: fmt.Sprintf("[[duration=600ms]] a %d", i)})
	}
	for i := range 8 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("b%d", i), Model: "b", Content: fmt.Sprintf("[[duration=600ms]] b %d", i)})
	}
	r.Submit(tasks...)
	for _, tk := range tasks {
		if got := r.Final(taskfile.KindAPI, tk.ID, 60*time.Second); got.State != taskfile.StateSuccess || got.Attempt != 1 {
			t.Errorf("%s: %s attempt %d %s", tk.ID, got.State, got.Attempt, got.Error)
		}
	}
	d.Stop()
	a, b, all := stand.MaxConcurrentModel("vendor-a"), stand.MaxConcurrentModel("vendor-b"), stand.MaxConcurrent()
	if a != 2 || b != 3 || all != 5 || stand.Rejected() != 0 {
		t.Errorf("stand-in saw at most %d of A, %d of B, %d in all at once, %d 429s; want 2, 3, 5, 0", a, b, all, stand.Rejected())
	}
	aAt, _ := requestsOf(stand, "vendor-a")
	bAt, _ := requestsOf(stand, "vendor-b")
	// A's third request waits for one of A's to end (600 ms); B's first,
	// queued behind all of A's, does not wait for it.
	if len(aAt) != 8 || len(bAt) != 8 || !bAt[0].Before(aAt[2]) {
		t.Errorf("B's first request at %v, A's third at %v: B waited behind A", bAt[0], aAt[2])
	}
	t.Logf("max at once: A %d, B %d, all %d", a, b, all)
}

// A model at its rpm waits while another runs; a 429 with Retry-After on
// one model pauses that model only.
func TestE2E_Quota_RPMAnd429(t *testing.T) {
	t.Parallel()
	// The vendor admits one request of P at once; spoolgate was told 2.
	stand := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey, ModelQuota: map[string]int{"vendor-p": 1}, RetryAfter: 3 * time.Second})
	r := rig.New(t, rig.Opts{APIConc: 5, Tail: e2eQuotaModels(stand.URL(), "slow , rpm: 60", "fast", "p , concurrency: 2", "b")}, "E2E_API_KEY="+rig.APIKey)
	d := r.Start()

	// rpm 60: one start a second for slow; fast's tasks, behind them in
	// the queue, do not wait.
	var tasks []rig.Task
	for i := range 3 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("s%d", i), Model: "slow", Content: fmt.Sprintf("s %d", i)})
	}
	for i := range 4 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("f%d", i), Model: "fast", Content: fmt.Sprintf("f %d", i)})
	}
	r.Submit(tasks...)
	for _, tk := range tasks {
		r.Final(taskfile.KindAPI, tk.ID, 30*time.Second)
	}
	sAt, _ := requestsOf(stand, "vendor-slow")
	fAt, _ := requestsOf(stand, "vendor-fast")
	if len(sAt) != 3 || len(fAt) != 4 {
		t.Fatalf("%d slow and %d fast requests", len(sAt), len(fAt))
	}
	// The daemon sends them 1 s apart; the way to the stand-in adds some
	// jitter to each arrival (more under load), not to the spacing of the
	// sends.
	for i := 1; i < len(sAt); i++ {
		if gap := sAt[i].Sub(sAt[i-1]); gap < 700*time.Millisecond {
			t.Errorf("slow's requests %d and %d %s apart: rpm 60 sends them 1 s apart", i, i+1, gap)
		}
	}
	if span := sAt[2].Sub(sAt[0]); span < 1800*time.Millisecond {
		t.Errorf("slow's 3 requests within %s: rpm 60 sends them over 2 s", span)
	}
	if !fAt[3].Before(sAt[2]) {
		t.Errorf("fast's last request at %v, after slow's third at %v: fast waited for slow's rate", fAt[3], sAt[2])
	}

	// P: two at once, the vendor takes one: the second gets 429 with
	// Retry-After 3 s, and P starts nothing for 3 s; B runs meanwhile.
	tasks = nil
	for i := range 3 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("p%d", i), Model: "p", Content: fmt.Sprintf("[[duration=500ms]] p %d", i)})
	}
	for i := range 6 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("b%d", i), Model: "b", Content: fmt.Sprintf("[[duration=200ms]] b %d", i)})
	}
	r.Submit(tasks...)
	for _, tk := range tasks {
		if got := r.Final(taskfile.KindAPI, tk.ID, 60*time.Second); got.State != taskfile.StateSuccess {
			t.Errorf("%s: %s %s", tk.ID, got.State, got.Error)
		}
	}
	d.Stop()
	pAt, pStatus := requestsOf(stand, "vendor-p")
	bAt, _ := requestsOf(stand, "vendor-b")
	var first429 time.Time
	for i, st := range pStatus {
		if st == http.StatusTooManyRequests {
			first429 = pAt[i]
			break
		}
	}
	if first429.IsZero() {
		t.Fatalf("no 429 for P: %v", pStatus)
	}
	for i, at := range pAt {
		if at.After(first429) && at.Before(first429.Add(3*time.Second)) {
			t.Errorf("P request %d (%d) %s after the 429: P was not paused for Retry-After", i, pStatus[i], at.Sub(first429))
		}
	}
	last := bAt[len(bAt)-1]
	if len(bAt) != 6 || !last.Before(first429.Add(3*time.Second)) {
		t.Errorf("B's last request %s after P's 429: B waited for P's pause", last.Sub(first429))
	}
	t.Logf("P statuses %v; B's 6 requests within %s of P's 429", pStatus, last.Sub(first429).Round(time.Millisecond))
}

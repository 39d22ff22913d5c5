//go:build unix

package api

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 4's acceptance through `spoolgate run`: 429 then success, 400,
// timeout, the system message per needEmptyPrompt, the key in the
// Authorization header and nowhere in the spool or the daemon's log.
func TestE2E_API_Outcomes(t *testing.T) {
	t.Parallel()
	// Quota 1: a second request while one is answered gets 429 with
	// Retry-After: 1.
	stand := rig.APIStand(t, apistand.Options{Quota: 1, RetryAfter: time.Second, RequireKey: rig.APIKey})
	r := rig.New(t, rig.Opts{Tail: rig.APIModels(stand.URL())}, "E2E_API_KEY="+rig.APIKey)
	d := r.Start()

	// 429 then success: a request of the test's own holds the only slot
	// until the target has had its 429, then lets go; the retry, after
	// Retry-After (1 s), succeeds. The target carries a prompt to a
	// needEmptyPrompt model: no system message may be sent.
	release := e2eHoldSlot(t, stand)
	r.Submit(rig.Task{ID: "target", Model: "api-reasoner", Prompt: "Be brief.", Content: "think hard"})
	testkit.Wait(t, "the target's 429", 10*time.Second, func() bool {
		for _, q := range stand.Requests() {
			if q.User == "think hard" && q.Status == http.StatusTooManyRequests {
				return true
			}
		}
		return false
	})

	release()
	target := r.Final(taskfile.KindAPI, "target", 15*time.Second)
	// The retry must come after the release, which the test makes only once
	// it has seen the 429: on a loaded machine that can take longer than
	// Retry-After, and the retry then meets the held slot again. So the
	// answers must be one or more 429s then a 200, one attempt each, each
	// retry at least Retry-After (1 s, not retryBackoff's 50 ms) after the
	// 429 before it.
	var statuses []int
	for _, q := range stand.Requests() {
		if q.User == "think hard" {
			statuses = append(statuses, q.Status)
			if q.HasSystem {
				t.Errorf("needEmptyPrompt model sent a system message %q", q.System)
			}
		}
	}
	n := len(statuses)
	if n < 2 || statuses[n-1] != http.StatusOK || strings.Count(fmt.Sprint(statuses), "429") != n-1 {
		t.Errorf("target's requests answered %v, want one or more 429s then 200", statuses)
	}
	if target.State != taskfile.StateSuccess || target.Attempt != n || target.Result != "Answer: think hard" {
		t.Errorf("target: state %s attempt %d result %q error %q; want success after %d attempts", target.State, target.Attempt, target.Result, target.Error, n)
	}
	at := rig.RequestTimes(stand, "think hard")
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 900*time.Millisecond {
			t.Errorf("retry %d after a 429 with Retry-After: 1 came %s later", i, gap)
		}
	}

	// A plain model sends the prompt as the system message; the answer
	// also goes to the output file.
	r.Submit(rig.Task{ID: "plain", Model: "api-plain", Prompt: "Be brief.", Content: "[[duration=200ms]] say hello", Output: "e2e/plain.txt"})
	plain := r.Final(taskfile.KindAPI, "plain", 10*time.Second)
	if plain.State != taskfile.StateSuccess || plain.Attempt != 1 || plain.Result != "Answer: say hello" {
		t.Errorf("plain: state %s attempt %d result %q error %q; want success, 1, %q", plain.State, plain.Attempt, plain.Result, plain.Error, "Answer: say hello")
	}
	if out, err := os.ReadFile(filepath.Join(r.L.Output(), "e2e", "plain.txt")); err != nil || string(out) != plain.Result {
		t.Errorf("output file: %q, %v; want the result", out, err)
	}
	for _, q := range stand.Requests() {
		if q.User == "[[duration=200ms]] say hello" && (!q.HasSystem || q.System != "Be brief.") {
			t.Errorf("plain model: system message %v %q, want \"Be brief.\"", q.HasSystem, q.System)
		}
	}

	// 400: permanent, one attempt, the server's message kept.
	r.Submit(rig.Task{ID: "bad", Model: "api-plain", Content: "[[status=400]] malformed"})
	bad := r.Final(taskfile.KindAPI, "bad", 10*time.Second)
	if bad.State != taskfile.StateFailed || bad.ErrorClass != taskfile.ClassPermanent || bad.Attempt != 1 || !strings.Contains(bad.Error, "400") {
		t.Errorf("400: state %s class %s attempt %d error %q; want failed, permanent, 1", bad.State, bad.ErrorClass, bad.Attempt, bad.Error)
	}

	// Timeout: the model's 300 ms timeout against a 10 s answer, retried
	// until attempts run out (maxRetries 2: three attempts).
	start := time.Now()
	r.Submit(rig.Task{ID: "slow", Model: "api-quick", Content: "[[duration=10s]] slow answer"})
	slow := r.Final(taskfile.KindAPI, "slow", 15*time.Second)
	if slow.State != taskfile.StateFailed || slow.ErrorClass != taskfile.ClassTransient || slow.Attempt != 3 || !strings.Contains(slow.Error, "timeout") {
		t.Errorf("timeout: state %s class %s attempt %d error %q; want failed transient after 3 attempts", slow.State, slow.ErrorClass, slow.Attempt, slow.Error)
	}
	if n := len(rig.RequestTimes(stand, "[[duration=10s]] slow answer")); n != 3 {
		t.Errorf("stand-in saw %d requests of the slow task, want 3", n)
	}
	t.Logf("timeout task: 3 attempts of 300 ms with 50/100 ms backoff took %s through the daemon", time.Since(start).Round(time.Millisecond))

	for _, q := range stand.Requests() {
		if q.User != e2eHoldContent && q.Authorization != "Bearer "+rig.APIKey {
			t.Errorf("request %q carried Authorization %q", q.User, q.Authorization)
		}
	}
	d.Stop()

	// The planted key: in no file under the spool (task files, logs,
	// outputs), not in the daemon's stderr.
	hits, n := rig.FilesContaining(t, r.L.Root, rig.APIKey)
	if len(hits) > 0 {
		t.Errorf("the API key appears in %v", hits)
	}
	if n < 8 {
		t.Errorf("walked only %d files under the spool; the check proves little", n)
	}
	if strings.Contains(d.LogText(), rig.APIKey) {
		t.Errorf("the API key appears in the daemon's stderr")
	}
	// Its variable name may be logged; a prefix of the key must not be.
	if strings.Contains(d.LogText(), "PLANTED") {
		t.Errorf("part of the API key appears in the daemon's stderr")
	}
	t.Logf("key check: %d files under the spool and the daemon's stderr (%d bytes) are clean", n, len(d.LogText()))
}

// e2eHoldContent is the content of the test's own slot-holding request.
const e2eHoldContent = "[[hang]] hold the only slot"

// e2eHoldSlot sends a request of the test's own that the stand-in holds
// open (a hang), waits until the stand-in counts it in flight, and returns
// the function that ends it.
func e2eHoldSlot(t *testing.T, s *apistand.Server) (release func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	body := fmt.Sprintf(`{"model":"stand-in","messages":[{"role":"user","content":%q}]}`, e2eHoldContent)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+rig.APIKey)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	release = func() {
		cancel()
		<-done
	}
	t.Cleanup(release)
	testkit.Wait(t, "the held request in flight", 10*time.Second, func() bool { return s.InFlight() == 1 })
	return release
}

// The API lane's concurrency holds against the stand-in's own count: with
// the default (3) and the cap (5), twelve slow tasks reach exactly that
// many requests at once, and never more (the quota of 5 would say 429).
func TestE2E_API_Concurrency(t *testing.T) {
	t.Parallel()
	for _, conc := range []int{0, 5} {
		want := conc
		if want == 0 {
			want = 3 // the default: the key is left out of the config
		}
		t.Run(fmt.Sprintf("concurrency-%d", want), func(t *testing.T) {
			stand := rig.APIStand(t, apistand.Options{Quota: 5, RequireKey: rig.APIKey})
			r := rig.New(t, rig.Opts{APIConc: conc, Tail: rig.APIModels(stand.URL())}, "E2E_API_KEY="+rig.APIKey)
			if r.Cfg.API.Concurrency != want {
				t.Fatalf("config concurrency %d, want %d", r.Cfg.API.Concurrency, want)
			}
			d := r.Start()
			var tasks []rig.Task
			for i := range 12 {
				tasks = append(tasks, rig.Task{ID: fmt.Sprintf("c%02d", i), Model: "api-plain", Content: fmt.Sprintf("[[duration=600ms]] task %d", i)})
			}
			start := time.Now()
			r.Submit(tasks...)
			for _, tk := range tasks {
				got := r.Final(taskfile.KindAPI, tk.ID, 30*time.Second)
				if got.State != taskfile.StateSuccess || got.Attempt != 1 {
					t.Errorf("%s: state %s attempt %d error %q; want success at attempt 1", tk.ID, got.State, got.Attempt, got.Error)
				}
			}
			took := time.Since(start)
			d.Stop()
			if m, rej, tot := stand.MaxConcurrent(), stand.Rejected(), stand.Total(); m != want || rej != 0 || tot != 12 {
				t.Errorf("stand-in saw at most %d at once, %d rejected (429), %d requests; want %d, 0, 12", m, rej, tot, want)
			}
			t.Logf("12 tasks of 600 ms at concurrency %d: %s (ideal %s)", want, took.Round(time.Millisecond), time.Duration((12+want-1)/want)*600*time.Millisecond)
		})
	}
}

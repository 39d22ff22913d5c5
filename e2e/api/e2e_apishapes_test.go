//go:build unix

package api

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eEchoKey is long enough that a cut through it leaves pieces to find.
const e2eEchoKey = "sk-echo-PLANTED-0123456789abcdefABCDEF-end"

// e2eKeyPieces lists the 6-character pieces of key that s contains.
func e2eKeyPieces(key, s string) []string {
	var found []string
	for i := 0; i+6 <= len(key); i++ {
		if strings.Contains(s, key[i:i+6]) {
			found = append(found, key[i:i+6])
		}
	}
	return found
}

// Issue 11 through `spoolgate run`: a server that echoes the key (the
// Authorization header) at offsets around the 200- and 500-character cuts,
// in five answer shapes. Every task fails with the server's status and
// class, and no 6-character piece of the key is in any file under the
// spool (task files, task logs), in the daemon's stderr, or in `results`.
func TestE2E_API_KeyEcho(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{RequireKey: e2eEchoKey})
	r := rig.New(t, rig.Opts{Retries0: true, Tail: rig.APIModels(stand.URL())}, "E2E_API_KEY="+e2eEchoKey)
	d := r.Start()
	shapes := []struct {
		name, directive string
		class           taskfile.ErrorClass
		msg             string
	}{
		{"express413", "[[status=413]] [[shape=string]]", taskfile.ClassPermanent, "HTTP 413: RequestEntityTooLargeError: "},
		{"openai400", "[[status=400]]", taskfile.ClassPermanent, "HTTP 400 (invalid_request_error): "},
		{"html502", "[[status=502]] [[shape=html]]", taskfile.ClassTransient, "HTTP 502: 502 Bad Gateway "},
		{"streamkey", "[[streamerror=invalid_api_key]]", taskfile.ClassAccount, "error event in the answer stream (invalid_api_key): "},
		{"neither", "[[junk]]", taskfile.ClassTransient, "neither an event stream nor a chat completion"},
	}
	offsets := []int{0, 150, 180, 195, 200, 205, 460, 470, 480, 490, 495, 500, 505, 600}
	var tasks []rig.Task
	for _, s := range shapes {
		for _, at := range offsets {
			tasks = append(tasks, rig.Task{
				ID:      fmt.Sprintf("echo-%s-%d", s.name, at),
				Model:   "api-plain",
				Content: fmt.Sprintf("%s [[echokey=%d/600]] x", s.directive, at),
			})
		}
	}
	r.Submit(tasks...)
	redacted := map[string]int{}
	for i, tk := range tasks {
		s := shapes[i/len(offsets)]
		got := r.Final(taskfile.KindAPI, tk.ID, 30*time.Second)
		if got.State != taskfile.StateFailed || got.ErrorClass != s.class || !strings.Contains(got.Error, s.msg) {
			t.Errorf("%s: state %s class %s error %q; want failed, %s, containing %q", tk.ID, got.State, got.ErrorClass, got.Error, s.class, s.msg)
		}
		if strings.Contains(got.Error, "[redacted]") {
			redacted[s.name]++
		}
	}
	results := r.CLI("results", "--format", "csv") + r.CLI("results")
	d.Stop()

	for _, s := range shapes {
		if redacted[s.name] == 0 {
			t.Errorf("%s: no task error shows [redacted]: the echoed key never reached what is kept", s.name)
		}
	}
	files := 0
	err := filepath.WalkDir(r.L.Root, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if pieces := e2eKeyPieces(e2eEchoKey, string(b)); len(pieces) > 0 {
			t.Errorf("%s keeps pieces of the key: %v", p, pieces)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pieces := e2eKeyPieces(e2eEchoKey, d.LogText()); len(pieces) > 0 {
		t.Errorf("the daemon's stderr keeps pieces of the key: %v", pieces)
	}
	if pieces := e2eKeyPieces(e2eEchoKey, results); len(pieces) > 0 {
		t.Errorf("`spoolgate results` prints pieces of the key: %v", pieces)
	}
	if files < 2*len(tasks) {
		t.Errorf("walked %d files under the spool; want a task file and a log per task (%d)", files, 2*len(tasks))
	}
	if n := stand.Total(); n != len(tasks) {
		t.Errorf("stand-in saw %d requests; want %d (maxRetries 0)", n, len(tasks))
	}
	t.Logf("key echo through spoolgate run: %d tasks (%d shapes x %d offsets), %d files under the spool, %d bytes of stderr, %d bytes of results: no 6-character piece of the key",
		len(tasks), len(shapes), len(offsets), files, len(d.LogText()), len(results))
}

// Issue 11's API cases through `spoolgate run`: a JSON answer to a
// streamed request is the result; express's 413 string error and a stream's
// invalid_api_key fail at the first attempt with their class; a stream's
// rate_limit_exceeded is retried after the wait its message names (2 s),
// not retryBackoff (50 ms).
func TestE2E_API_Shapes(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey})
	r := rig.New(t, rig.Opts{Tail: rig.APIModels(stand.URL())}, "E2E_API_KEY="+rig.APIKey)
	d := r.Start()
	r.Submit(
		rig.Task{ID: "json", Model: "api-plain", Content: "[[json]] whole answer", Output: "json.txt"},
		rig.Task{ID: "too-large", Model: "api-plain", Content: "[[status=413]] [[shape=string]] x"},
		rig.Task{ID: "bad-key", Model: "api-plain", Content: "[[streamerror=invalid_api_key]] x"},
		rig.Task{ID: "no-model", Model: "api-plain", Content: "[[streamerror=model_not_found]] x"},
		rig.Task{ID: "limited", Model: "api-plain", Content: "[[streamerror=rate_limit_exceeded]] x"},
	)
	tests := []struct {
		id       string
		state    taskfile.State
		class    taskfile.ErrorClass
		attempts int
		text     string // in the result or the error
	}{
		{"json", taskfile.StateSuccess, "", 1, "Answer: whole answer"},
		{"too-large", taskfile.StateFailed, taskfile.ClassPermanent, 1, "HTTP 413: RequestEntityTooLargeError: stand-in: status 413 requested"},
		{"bad-key", taskfile.StateFailed, taskfile.ClassAccount, 1, "error event in the answer stream (invalid_api_key)"},
		{"no-model", taskfile.StateFailed, taskfile.ClassPermanent, 1, "error event in the answer stream (model_not_found)"},
		{"limited", taskfile.StateFailed, taskfile.ClassTransient, 3, "error event in the answer stream (rate_limit_exceeded): Rate limit reached"},
	}
	for _, tt := range tests {
		got := r.Final(taskfile.KindAPI, tt.id, 30*time.Second)
		if got.State != tt.state || got.ErrorClass != tt.class || got.Attempt != tt.attempts || !strings.Contains(got.Result+got.Error, tt.text) {
			t.Errorf("%s: state %s class %q attempt %d result %q error %q; want %s %q %d with %q",
				tt.id, got.State, got.ErrorClass, got.Attempt, got.Result, got.Error, tt.state, tt.class, tt.attempts, tt.text)
		}
	}
	if out, err := os.ReadFile(filepath.Join(r.L.Output(), "json.txt")); err != nil || string(out) != "Answer: whole answer" {
		t.Errorf("output of the JSON answer: %q, %v", out, err)
	}
	at := rig.RequestTimes(stand, "[[streamerror=rate_limit_exceeded]] x")
	if len(at) != 3 {
		t.Fatalf("the rate-limited task was sent %d times; want 3", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 1900*time.Millisecond {
			t.Errorf("retry %d came %s after the one before; want the 2s the message asked for", i, gap)
		}
	}
	d.Stop()
}

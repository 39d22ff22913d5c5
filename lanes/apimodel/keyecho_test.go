package apimodel

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
)

// keyFragments returns every piece of key, redactWindow bytes long, that
// s contains.
func keyFragments(key, s string) []string {
	var found []string
	for i := 0; i+redactWindow <= len(key); i++ {
		if f := key[i : i+redactWindow]; strings.Contains(s, f) {
			found = append(found, f)
		}
	}
	return found
}

func TestRedactor_Redact(t *testing.T) {
	r := newRedactor(plantedKey)
	tests := []struct {
		in, want string
	}{
		{"no key here", "no key here"},
		{"key " + plantedKey + " end", "key [redacted] end"},
		{"Bearer " + plantedKey, "Bearer [redacted]"},
		{plantedKey + plantedKey, "[redacted]"},
		{"masked " + plantedKey[:8] + "****" + plantedKey[len(plantedKey)-6:], "masked [redacted]****[redacted]"},
		{"cut at the end: " + plantedKey[:9], "cut at the end: [redacted]"},
		{plantedKey[20:] + " cut at the start", "[redacted] cut at the start"},
		{"five " + plantedKey[:5] + " stay", "five " + plantedKey[:5] + " stay"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := r.redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := newRedactor("").redact("anything"); got != "anything" {
		t.Errorf("no key: %q", got)
	}
	if got := newRedactor("abc").redact("xabcx ab"); got != "x[redacted]x ab" {
		t.Errorf("short key: %q", got)
	}
	// keep masks before it cuts: a key across the cut leaves nothing.
	msg := strings.Repeat("x", 480) + plantedKey
	if got := r.keep(msg, keepMessage); len(keyFragments(plantedKey, got)) > 0 {
		t.Errorf("keep left %v in %q", keyFragments(plantedKey, got), got)
	}
}

// FuzzRedactor_Redact: whatever surrounds the key, however often, no
// piece of it of redactWindow bytes survives redaction or a cut after it.
func FuzzRedactor_Redact(f *testing.F) {
	f.Add("", "", 0)
	f.Add("Incorrect API key provided: ", ".", 3)
	f.Add(strings.Repeat("a", 480), "", 500)
	f.Add("sk-PLA", "NTED", 7)
	r := newRedactor(plantedKey)
	f.Fuzz(func(t *testing.T, before, after string, cut int) {
		s := before + plantedKey + after + plantedKey[3:17] + before
		got := r.redact(s)
		if fr := keyFragments(plantedKey, got); len(fr) > 0 {
			t.Fatalf("redact(%q) = %q keeps %v", s, got, fr)
		}
		if cut < 0 {
			cut = -cut
		}
		if fr := keyFragments(plantedKey, r.keep(s, cut%1024)); len(fr) > 0 {
			t.Fatalf("keep(%q, %d) keeps %v", s, cut%1024, fr)
		}
	})
}

// A server that echoes the key (its Authorization header) at every offset
// of its message, in every error shape: no piece of the key of
// redactWindow bytes reaches an error or a log line the executor writes.
// The message is the key inside 600 filler characters at each offset
// 0..600, then the key at the end of 0..600 filler characters: every
// position relative to the 200- and 500-character cuts, in bodies shorter
// and longer than them (every third per shape in `make test`, all of them
// in `make soak`).
func TestExecutor_KeyEcho(t *testing.T) {
	s := stand(t, apistand.Options{RequireKey: plantedKey})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m", APIKeyEnv: "KEY_VAR"})
	e := executor(t, c)
	shapes := []struct{ name, directive string }{
		{"openai object 400", "[[status=400]]"},
		{"express string 413", "[[status=413]] [[shape=string]]"},
		{"message alone 500", "[[status=500]] [[shape=message]]"},
		{"html 502", "[[status=502]] [[shape=html]]"},
		{"plain text 503", "[[status=503]] [[shape=text]]"},
		{"google array 429", "[[status=429]] [[shape=array]]"},
		{"stream error event", "[[streamerror=invalid_api_key]]"},
		{"200 neither", "[[junk]]"},
	}
	const maxLen = 600
	type echo struct{ at, n int }
	var echoes []echo
	for at := 0; at <= maxLen; at++ {
		echoes = append(echoes, echo{at, maxLen})
	}
	for n := 0; n < maxLen; n++ {
		echoes = append(echoes, echo{n, n})
	}
	type job1 struct {
		shape int
		echo
	}
	jobs := make(chan job1)
	var (
		mu       sync.Mutex
		leaks    []string
		redacted = make([]int, len(shapes))
		calls    int
		outBytes int
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for j := range jobs {
				content := fmt.Sprintf("%s [[echokey=%d/%d]] x", shapes[j.shape].directive, j.at, j.n)
				log := &logBuf{}
				_, err := e.Execute(t.Context(), job(c, "m", "", content, log))
				out := log.String()
				if err != nil {
					out = err.Error() + "\n" + out
				}
				mu.Lock()
				calls++
				outBytes += len(out)
				if err == nil {
					leaks = append(leaks, fmt.Sprintf("%s at %d/%d: no error", shapes[j.shape].name, j.at, j.n))
				} else if fr := keyFragments(plantedKey, out); len(fr) > 0 {
					leaks = append(leaks, fmt.Sprintf("%s at %d/%d: %v in %q", shapes[j.shape].name, j.at, j.n, fr, out))
				}
				if strings.Contains(out, redactedMark) {
					redacted[j.shape]++
				}
				mu.Unlock()
			}
		})
	}
	// `make soak` sends every shape at every offset (9,608
	// bodies); `make test` every third offset of each shape, staggered by
	// shape, so each offset still goes through some shape and each shape
	// through offsets on both sides of both cuts (3,203 bodies).
	sent := 0
	for i := range shapes {
		for k, ec := range echoes {
			if !testkit.Reliability() && (k+i)%3 != 0 {
				continue
			}
			jobs <- job1{i, ec}
			sent++
		}
	}
	close(jobs)
	wg.Wait()
	for i, l := range leaks {
		if i == 5 {
			t.Errorf("... and %d more", len(leaks)-5)
			break
		}
		t.Error(l)
	}
	for i, n := range redacted {
		// The key lands inside what is kept for the low offsets: the echo
		// reached the executor, and the redaction is what hid it.
		if n == 0 {
			t.Errorf("%s: no output shows %s: the key never reached what is kept", shapes[i].name, redactedMark)
		}
	}
	if calls != sent || s.Total() != sent {
		t.Errorf("%d calls, %d requests served; want %d", calls, s.Total(), sent)
	}
	t.Logf("key echo: %d bodies (%d shapes, %d offsets), %d bytes of errors and logs, %d with %s, fragments of %d bytes found: %d",
		calls, len(shapes), len(echoes), outBytes, sum(redacted), redactedMark, redactWindow, len(leaks))
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

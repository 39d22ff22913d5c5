//go:build unix

package doors

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// sseEvent is one line of a stream, when it came.
type sseEvent struct {
	at   time.Time
	line string
}

// Six parallel streaming requests to one web model: they run one at a
// time on its one session and all succeed, and each stream gets a comment
// line at least every keepAlive (300 ms here; 15 s by default) until its
// answer, with its state and queue position.
func TestE2E_Door_SixStreams(t *testing.T) {
	r := newDoorRig(t, 0.02, "")
	d := r.startDoor("door")
	const n = 6
	var wg sync.WaitGroup
	events := make([][]sseEvent, n)
	errs := make([]error, n)
	contents := make([]string, n)
	for i := range n {
		contents[i] = fmt.Sprintf("[[duration=40s]] parallel stream %d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			events[i], errs[i] = r.rawStream(doorToken, "web-door", contents[i])
		}()
	}
	wg.Wait()
	positions := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Errorf("stream %d: %v", i, errs[i])
			continue
		}
		if len(events[i]) == 0 {
			t.Errorf("stream %d: no line at all", i)
			continue
		}
		var text strings.Builder
		last := events[i][0].at
		var maxGap time.Duration
		done, dataSeen := false, false
		for _, e := range events[i] {
			switch {
			case strings.HasPrefix(e.line, ":"):
				if !dataSeen {
					maxGap = max(maxGap, e.at.Sub(last))
					last = e.at
				}
				// ": spoolgate task web/ID state pending position N"
				if f := strings.Fields(e.line); len(f) > 7 && f[5] == "pending" && f[6] == "position" {
					positions[f[7]] = true
				}
			case e.line == "data: [DONE]":
				done = true
			case strings.HasPrefix(e.line, "data: "):
				if !dataSeen {
					maxGap = max(maxGap, e.at.Sub(last))
				}
				dataSeen = true
				var ch openai.ChatCompletionChunk
				if err := json.Unmarshal([]byte(strings.TrimPrefix(e.line, "data: ")), &ch); err != nil {
					t.Errorf("stream %d: %q: %v", i, e.line, err)
				} else if len(ch.Choices) > 0 {
					text.WriteString(ch.Choices[0].Delta.Content)
				}
			}
		}
		if want := chatstand.AnswerFor(contents[i]); !done || text.String() != want {
			t.Errorf("stream %d: done %t, text %q, want %q", i, done, text.String(), want)
		}
		// 300 ms keep-alive; ten times that on a loaded machine.
		if maxGap > 3*time.Second {
			t.Errorf("stream %d: %s without a line before its answer", i, maxGap)
		}
	}
	if m := r.web.MaxPerAccount()["demo"]; m != 1 {
		t.Errorf("the session ran %d generations at once, want 1", m)
	}
	if len(positions) < 2 {
		t.Errorf("the comments named queue positions %v, want several", positions)
	}
	t.Logf("queue positions seen in comments: %v", positions)
	d.Stop()
	r.checkNoToken(d.LogText())
}

// rawStream sends one streaming request with net/http and returns every
// non-empty line of its body, timed.
func (r *doorRig) rawStream(tok, model, content string) ([]sseEvent, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "stream": true, "messages": []any{map[string]any{"role": "user", "content": content}}})
	req, err := http.NewRequest(http.MethodPost, r.base+"/v1/chat/completions", strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return nil, fmt.Errorf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var evs []sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if sc.Text() != "" {
			evs = append(evs, sseEvent{time.Now(), sc.Text()})
		}
	}
	return evs, sc.Err()
}

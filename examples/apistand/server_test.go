package apistand

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		in     string
		want   Directives
		answer string
	}{
		{"hello   world", Directives{}, "Answer: hello world"},
		{"[[duration=12s]] write\n a poem", Directives{Duration: 12 * time.Second}, "Answer: write a poem"},
		{"x [[status=500]] y", Directives{Status: 500}, "Answer: x y"},
		{"[[fail=2]]z", Directives{Fail: 2}, "Answer: z"},
		{"[[hang]] [[empty]] q", Directives{Hang: true, Empty: true}, "Answer: q"},
		{"[[status=abc]] [[bogus=1]] k", Directives{}, "Answer: k"},
		{"[[ duration = 1m ]]a", Directives{Duration: time.Minute}, "Answer: a"},
	}
	for _, tt := range tests {
		d, a := ParseDirectives(tt.in)
		if d != tt.want || a != tt.answer {
			t.Errorf("ParseDirectives(%q) = %+v, %q; want %+v, %q", tt.in, d, a, tt.want, tt.answer)
		}
	}
}

// start runs a stand-in for one test.
func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

var client = &http.Client{Timeout: 10 * time.Second}

// post sends a chat request and returns status, headers and body.
func post(t *testing.T, ctx context.Context, s *Server, key string, body map[string]any) (int, http.Header, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

func msgs(system, user string) []map[string]any {
	var m []map[string]any
	if system != "" {
		m = append(m, map[string]any{"role": "system", "content": system})
	}
	return append(m, map[string]any{"role": "user", "content": user})
}

func TestServer_Chat(t *testing.T) {
	s := start(t, Options{RequireKey: "k1"})
	code, _, body := post(t, t.Context(), s, "k1", map[string]any{"model": "m1", "messages": msgs("be brief", "hi  there [[duration=1ms]]")})
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var resp struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("body %s: %v", body, err)
	}
	if got := resp.Choices[0].Message.Content; got != "Answer: hi there" {
		t.Errorf("answer %q", got)
	}
	// Parts-style content is read too, and no system message is recorded as such.
	post(t, t.Context(), s, "k1", map[string]any{"model": "m2", "messages": []map[string]any{
		{"role": "user", "content": []map[string]any{{"type": "text", "text": "a"}, {"type": "text", "text": "b"}}}}})
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r0, r1 := reqs[0], reqs[1]
	if !r0.HasSystem || r0.System != "be brief" || r0.User != "hi  there [[duration=1ms]]" || r0.Model != "m1" || r0.Authorization != "Bearer k1" || r0.Status != 200 {
		t.Errorf("first request recorded as %+v", r0)
	}
	if r1.HasSystem || r1.User != "ab" || r1.Model != "m2" {
		t.Errorf("second request recorded as %+v", r1)
	}
}

func TestServer_Key(t *testing.T) {
	s := start(t, Options{RequireKey: "right"})
	for _, key := range []string{"", "wrong"} {
		code, _, body := post(t, t.Context(), s, key, map[string]any{"model": "m", "messages": msgs("", "x")})
		if code != 401 || !strings.Contains(string(body), `"message"`) {
			t.Errorf("key %q: status %d body %s", key, code, body)
		}
	}
}

func TestServer_Status(t *testing.T) {
	s := start(t, Options{})
	for _, c := range []int{400, 404, 500, 503} {
		code, _, body := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "[[status="+itoa(c)+"]]")})
		var e struct {
			Error struct{ Message, Type string } `json:"error"`
		}
		if code != c || json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
			t.Errorf("status=%d: got %d %s", c, code, body)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestServer_Fail(t *testing.T) {
	s := start(t, Options{})
	var got []int
	for range 4 {
		code, _, _ := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "[[fail=2]] same")})
		got = append(got, code)
	}
	// Other content has its own count.
	code, _, _ := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "[[fail=2]] other")})
	if want := []int{500, 500, 200, 200}; !equal(got, want) || code != 500 {
		t.Errorf("fail=2 gave %v then %d; want %v then 500", got, code, want)
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestServer_DurationScaled(t *testing.T) {
	s := start(t, Options{Scale: 0.01})
	t0 := time.Now()
	code, _, _ := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "[[duration=20s]] x")})
	el := time.Since(t0)
	if code != 200 || el < 200*time.Millisecond || el > 3*time.Second {
		t.Errorf("duration=20s at scale 0.01: status %d after %v, want 200 after about 200ms", code, el)
	}
}

func TestServer_Empty(t *testing.T) {
	s := start(t, Options{})
	_, _, body := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "[[empty]] x")})
	if !strings.Contains(string(body), `"content":""`) {
		t.Errorf("empty: %s", body)
	}
}

func TestServer_Stream(t *testing.T) {
	s := start(t, Options{Scale: 0.001})
	b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": msgs("", "one two three [[duration=30s]]")})
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL()+"/chat/completions", bytes.NewReader(b))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var text strings.Builder
	events, done := 0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		events++
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Choices[0].Delta.Content)
	}
	if !done || text.String() != "Answer: one two three" || events < 5 {
		t.Errorf("stream: done=%v events=%d text %q", done, events, text.String())
	}
}

func TestServer_Quota(t *testing.T) {
	s := start(t, Options{Quota: 2, RetryAfter: 1500 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			b, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs("", "[[hang]]")})
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", bytes.NewReader(b))
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	testkit.Wait(t, "s.InFlight() == 2", 5*time.Second, func() bool { return s.InFlight() == 2 })
	code, h, body := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "x")})
	if code != 429 || h.Get("Retry-After") != "2" || !strings.Contains(string(body), "rate_limit") {
		t.Errorf("over quota: %d Retry-After %q %s", code, h.Get("Retry-After"), body)
	}
	cancel()
	wg.Wait()
	testkit.Wait(t, "s.InFlight() == 0", 5*time.Second, func() bool { return s.InFlight() == 0 })
	if code, _, _ := post(t, t.Context(), s, "", map[string]any{"model": "m", "messages": msgs("", "x")}); code != 200 {
		t.Errorf("after the hung ones ended: %d", code)
	}
	if s.MaxConcurrent() != 2 || s.Rejected() != 1 || s.Total() != 4 {
		t.Errorf("max %d rejected %d total %d; want 2 1 4", s.MaxConcurrent(), s.Rejected(), s.Total())
	}
}

// Close ends a hung answer rather than waiting for it.
func TestServer_CloseEndsHang(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": msgs("", "[[hang]]")})
		resp, err := client.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	testkit.Wait(t, "s.InFlight() == 1", 5*time.Second, func() bool { return s.InFlight() == 1 })
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("Close took %v", el)
	}
	<-errc
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestServer_Models(t *testing.T) {
	s := start(t, Options{Models: []string{"a", "b"}})
	resp, err := client.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Data) != 2 || l.Data[1].ID != "b" {
		t.Errorf("models: %+v %v", l, err)
	}
}

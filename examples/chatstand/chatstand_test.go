package chatstand

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// shared is the Chromium the page tests share (testkit.SharedChromium).
var shared testkit.SharedChromium

func TestMain(m *testing.M) { shared.Main(m) }

func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func generate(t *testing.T, s *Server, session, system, content string) (int, map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"session": session, "system": system, "content": content})
	resp, err := http.Post(s.URL()+"api/generate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Error(err) // not Fatal: also called from a goroutine
		return -1, nil
	}
	defer resp.Body.Close()
	var out map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestAnswerFor(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"hello  world", "Answer: hello world"},
		{"[[duration=31s]] write\n a  poem [[fail=2]]", "Answer: write a poem"},
		{"x [[empty]]", ""},
		{"[[hang]]", "Answer: "},
	} {
		if got := AnswerFor(c.in); got != c.want {
			t.Errorf("AnswerFor(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestServer_GenerateCollision(t *testing.T) {
	s := start(t, Options{Scale: 0.01})
	// A long first generation (10 s scaled to 100 ms) holds the session...
	first := make(chan int, 1)
	go func() {
		// 3 s at this scale: the second must come while it runs, also on
		// a loaded machine (100 ms did not, in CI).
		code, _ := generate(t, s, "demo", "", "[[duration=300s]] long one")
		first <- code
	}()
	testkit.Wait(t, "first generation to start", 5*time.Second, func() bool { return s.Active() == 1 })
	// ...so a second one in the same session is refused with the page's error.
	code, out := generate(t, s, "demo", "", "second")
	if code != http.StatusConflict || out["error"] != ErrOneAtATime {
		t.Fatalf("second generation: %d %v, want 409 %q", code, out, ErrOneAtATime)
	}
	// Another session is not affected.
	if code, out := generate(t, s, "other", "", "[[duration=1s]] third"); code != 200 || out["answer"] != "Answer: third" {
		t.Fatalf("other session: %d %v", code, out)
	}
	if c := <-first; c != 200 {
		t.Fatalf("first generation: %d", c)
	}
	if s.Collisions() != 1 || s.MaxConcurrent() != 2 || s.Generations() != 2 {
		t.Fatalf("collisions %d max %d generations %d, want 1 2 2", s.Collisions(), s.MaxConcurrent(), s.Generations())
	}
	// After the first ended, the session takes a new one.
	if code, out := generate(t, s, "demo", "sys", "again"); code != 200 || out["answer"] != "Answer: again" {
		t.Fatalf("after: %d %v", code, out)
	}
	rec := s.Received()
	if len(rec) != 4 || rec[1].Refused != "collision" || rec[3].System != "sys" {
		t.Fatalf("received %+v", rec)
	}
}

func TestServer_FailAndEmpty(t *testing.T) {
	s := start(t, Options{Scale: 0.001})
	for i := range 2 {
		if code, out := generate(t, s, "demo", "", "x [[fail=2]]"); code != http.StatusServiceUnavailable || out["error"] != ErrFailed {
			t.Fatalf("attempt %d: %d %v", i, code, out)
		}
	}
	if code, out := generate(t, s, "demo", "", "x [[fail=2]]"); code != 200 || out["answer"] != "Answer: x" {
		t.Fatalf("third attempt: %d %v", code, out)
	}
	if code, out := generate(t, s, "demo", "", "x [[empty]]"); code != 200 || out["answer"] != "" {
		t.Fatalf("empty: %d %v", code, out)
	}
}

func TestServer_LoginPageAndLogout(t *testing.T) {
	s := start(t, Options{Scale: 0.001, Instructions: "Be nice."})
	get := func(cookie string) string {
		req, _ := http.NewRequest("GET", s.URL(), nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if p := get(""); !strings.Contains(p, `class="login"`) {
		t.Fatalf("signed-out page lacks a.login:\n%s", p)
	}
	// /login?user=demo sets the cookie and redirects to the chat page.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(s.URL() + "login?user=demo")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`textarea class="input"`, `button type="submit"`, `textarea class="system"`, "Be nice.", `class="new-chat"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("chat page lacks %s:\n%s", want, b)
		}
	}
	s.LogoutAll()
	u, _ := neturl.Parse(s.URL())
	cs := jar.Cookies(u)
	if len(cs) != 1 || cs[0].Name != SessionCookie {
		t.Fatalf("cookies %v", cs)
	}
	if p := get(cs[0].Value); !strings.Contains(p, `class="login"`) {
		t.Fatal("after LogoutAll the page still shows the chat")
	}
}

// With SignedIn a browser with no cookie opens the page signed in, and
// keeps the session its answer set; once that session ends it sees the
// signed-out page, as without the option.
func TestServer_SignedIn(t *testing.T) {
	s := start(t, Options{Scale: 0.001, SignedIn: "demo"})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	page := func() string {
		resp, err := c.Get(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if p := page(); strings.Contains(p, `class="login"`) || !strings.Contains(p, `textarea class="input"`) {
		t.Fatalf("a browser without a cookie does not open the chat signed in:\n%s", p)
	}
	u, _ := neturl.Parse(s.URL())
	cs := jar.Cookies(u)
	if len(cs) != 1 || cs[0].Name != SessionCookie {
		t.Fatalf("cookies %v: want the session cookie", cs)
	}
	s.mu.Lock()
	user := s.tokens[cs[0].Value]
	s.mu.Unlock()
	if user != "demo" {
		t.Fatalf("the cookie's session is %q's, want demo's", user)
	}
	s.LogoutAll()
	if p := page(); !strings.Contains(p, `class="login"`) {
		t.Fatal("after LogoutAll a browser with its old cookie still sees the chat")
	}
	if p, _ := http.Get(start(t, Options{}).URL()); p != nil {
		b, _ := io.ReadAll(p.Body)
		p.Body.Close()
		if !strings.Contains(string(b), `class="login"`) {
			t.Fatal("without SignedIn a browser with no cookie sees the chat")
		}
	}
}

// With LateCollisions a refused generation holds its caller as long as its
// answer would have, then fails: the field report's collisions cost time.
func TestServer_LateCollision(t *testing.T) {
	s := start(t, Options{Scale: 0.01, LateCollisions: true})
	first := make(chan int, 1)
	go func() {
		// 3 s at this scale: the second must come while it runs, also on
		// a loaded machine (100 ms did not, in CI).
		code, _ := generate(t, s, "demo", "", "[[duration=300s]] long one")
		first <- code
	}()
	testkit.Wait(t, "first generation to start", 5*time.Second, func() bool { return s.Active() == 1 })
	start := time.Now()
	code, out := generate(t, s, "demo", "", "[[duration=20s]] second")
	if code != http.StatusConflict || out["error"] != ErrOneAtATime {
		t.Fatalf("second generation: %d %v, want 409 %q", code, out, ErrOneAtATime)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Fatalf("refused after %s: a late collision takes the answer's whole time (200ms)", took)
	}
	if c := <-first; c != 200 {
		t.Fatalf("first generation: %d", c)
	}
}

//go:build unix

package doors

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/e2e/rig"
)

// TestE2E_ImportBounds is issue 50's import acceptance: through `spoolgate
// run`'s console, a logged-in operator's 1 KB template naming one 60 kB
// cell 200 times (in 40 rows: 458 MB once filled) and a CSV of one 8 MiB
// line of commas are each refused with their reason, in the operator's
// language, nothing is submitted, and the daemon's peak RSS (VmHWM) stays
// under 150 MB (unbounded, they took it to 991 and 819 MB).
func TestE2E_ImportBounds(t *testing.T) {
	t.Parallel()
	hash, err := console.HashPassword("li-secret")
	if err != nil {
		t.Fatal(err)
	}
	tail := fmt.Sprintf(`models:
  - {name: writer, kind: api, baseURL: "http://127.0.0.1:9/v1", model: stand-in, timeout: 10s}
console:
  users:
    li: %q
`, hash)
	r := rig.New(t, rig.Opts{Tail: tail, HTTP: "127.0.0.1:0"})
	d := r.Start()
	base := rig.StatusURL(t, d)

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(base+"/login", url.Values{"user": {"li"}, "password": {"li-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	page := func() string {
		resp, err := c.Get(base + "/import")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page())
	if m == nil {
		t.Fatal("no CSRF token on /import")
	}
	csrf := m[1]
	upload := func(name string, data []byte, fields map[string]string) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("csrf", csrf)
		mw.WriteField("step", "preview")
		for k, v := range fields {
			mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("file", name)
		fw.Write(data)
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, base+"/import", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Accept-Language", "zh-CN")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A legitimate import still previews: the bounds refuse only what
	// would grow past them.
	if code, body := upload("ok.csv", []byte("topic\n春茶\n"), map[string]string{"template": "写{{topic}}", "model": "writer"}); code != http.StatusOK || !strings.Contains(body, `id="import-submit"`) {
		t.Fatalf("a small table: %d\n%s", code, body)
	}

	idle := vmHWM(t, d.Cmd.Process.Pid)
	cell := strings.Repeat("x", 60_000)
	for _, tc := range []struct {
		name    string
		data    []byte
		fields  map[string]string
		want    string
		cli     []string
		wantCLI string
	}{
		{"a 1 KB template naming a 60 kB cell 200 times", []byte("a\n" + strings.Repeat(cell+"\n", 40)),
			map[string]string{"template": strings.Repeat("{{a}}", 200), "model": "writer"},
			`模板会把第 2 行填到 11.4 MiB（<span translate="no">{{a}}</span> 出现 200 次 × 58.6 KiB），超过一个任务最多能有的 1 MiB`,
			[]string{"--template", strings.Repeat("{{a}}", 200)},
			"template: row 2 would fill to 11.4 MiB ({{a}} 200 times × 58.6 KiB), more than the 1 MiB a task may hold"},
		{"an 8 MiB line of commas", bytes.Repeat([]byte(","), 8<<20),
			map[string]string{"contentCol": "a", "model": "writer"},
			"CSV 第 1 行长 8 MiB，超过一行最多能有的 1 MiB",
			[]string{"--content-col", "a"}, "csv: line 1 is 8 MiB long, more than the 1 MiB a line may be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := upload("bomb.csv", tc.data, tc.fields)
			if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, tc.want) {
				t.Fatalf("%d, want 413 and %q:\n%.2000s", code, tc.want, body)
			}
			// `spoolgate submit --table`, the same code from the shell.
			f := filepath.Join(t.TempDir(), "bomb.csv")
			if err := os.WriteFile(f, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := r.Run(append([]string{"submit", "--table", f, "--model", "writer"}, tc.cli...)...)
			if code == 0 || !strings.Contains(stderr, tc.wantCLI) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("submit --table: exit %d, want one line %q:\n%s", code, tc.wantCLI, stderr)
			}
		})
	}
	if hits, _ := rig.FilesContaining(t, r.Store().Layout.Root, "bomb"); len(hits) != 0 {
		t.Errorf("the refused imports left files: %v", hits)
	}
	// The daemon is this test binary: built with -race, every byte it
	// touches has shadow memory and its idle RSS is already near 140 MB,
	// so there only the imports' share is held, to the whole 150 MB
	// (unbounded, they take 900 MB without -race).
	hwm := vmHWM(t, d.Cmd.Process.Pid)
	t.Logf("the daemon's peak RSS: %d MB (%d MB before the imports)", hwm>>20, idle>>20)
	room := int64(150<<20 - idleRSS)
	if raceBuild() {
		room = 150 << 20
	} else if hwm > 150<<20 {
		t.Errorf("the daemon's peak RSS is %d MB, more than 150", hwm>>20)
	}
	if grew := hwm - idle; grew > room {
		t.Errorf("the imports took the daemon's peak RSS up %d MB, more than %d MB", grew>>20, room>>20)
	}
}

// idleRSS is about what a daemon takes before any import (52 MB in the
// issue, 56 MB here).
const idleRSS = 56 << 20

// raceBuild reports whether this binary, the daemon's too, was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// vmHWM is a process's peak resident set size, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

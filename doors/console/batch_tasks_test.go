package console

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestHTTPServer_BatchTasks: the batch page lists its tasks by state, a
// page of 50 at a time, named by their content with the id in the link;
// pending tasks in the order the lane takes them (a high priority first)
// with their place; the state links count each state; the page speaks
// Chinese to a Chinese browser.
func TestHTTPServer_BatchTasks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	now := time.Now().UTC()
	put := func(dir string, tk taskfile.Task) {
		t.Helper()
		tk.ModelKind, tk.Model, tk.Batch = taskfile.KindAPI, "writer", "big"
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(L.TaskPath(taskfile.KindAPI, dir, tk.TaskID), data, spool.FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 120 {
		tk := taskfile.Task{TaskID: fmt.Sprintf("p%03d", i), Content: fmt.Sprintf("Write   the\nlaunch copy number %d for the spring campaign, with a title and three tags", i),
			State: taskfile.StatePending, SubmittedAt: now.Add(time.Duration(i-200) * time.Second)}
		if i == 77 {
			tk.Priority = "high"
		}
		put(taskfile.DirPending, tk)
	}
	put(taskfile.DirFailed, taskfile.Task{TaskID: "f1", Content: "a filtered one", State: taskfile.StateFailed, Attempt: 3,
		ErrorClass: taskfile.ClassPermanent, Error: "content filter", SubmittedAt: now.Add(-time.Hour), FinishedAt: now.Add(-time.Minute)})
	put(taskfile.DirDone, taskfile.Task{TaskID: "d1", Content: "", State: taskfile.StateSuccess, Attempt: 1, Result: "ok",
		SubmittedAt: now.Add(-time.Hour), FinishedAt: now.Add(-2 * time.Minute)})
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	page := func(path, lang string) string {
		t.Helper()
		resp, b := getIn(t, h, path, lang)
		if resp.StatusCode != 200 {
			t.Fatalf("%s = %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	row := regexp.MustCompile(`<tr class="batch-task" data-state="([a-z]+)" data-id="([^"]+)">(?:<td><input [^>]+></td>)?<td>(\d*)</td><td translate="no"><a href="([^"]+)" title="([^"]+)" id="[^"]+">([^<]+)</a>`)
	rows := func(body string) [][]string { return row.FindAllStringSubmatch(body, -1) }

	all := page("/batch/big", "en")
	if got := rows(all); len(got) != batchPageSize {
		t.Fatalf("the first page lists %d tasks, want %d", len(got), batchPageSize)
	}
	for _, want := range []string{`>all <span class="num">122</span>`, `>pending <span class="num">120</span>`, `>failed <span class="num">1</span>`,
		`>success <span class="num">1</span>`, "page 1 of 3", `href="/batch/big?page=2#tasks"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the batch page lacks %q", want)
		}
	}
	pend := rows(page("/batch/big?state=pending", "en"))
	if len(pend) != batchPageSize || pend[0][2] != "p077" || pend[0][3] != "1" || pend[1][2] != "p000" || pend[1][3] != "2" {
		t.Errorf("pending, first rows %v %v: want p077 (high) at 1, then p000 at 2", pend[0][1:], pend[1][1:])
	}
	if n := pend[1][6]; n != "Write the launch copy number 0 for the spring campaign,…" || pend[1][5] != "api/p000" || pend[1][4] != "/task/api/p000" {
		t.Errorf("a pending row is named %q (title %q, link %q)", n, pend[1][5], pend[1][4])
	}
	// Each pending row says when the lane's simulation ends it; the one
	// taken first before the last.
	etaOf := func(body, id string) string {
		m := regexp.MustCompile(`data-id="` + id + `">.*?<td[^>]*>(ETA [^<]*)</td></tr>`).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		return m[1]
	}
	pendPage := page("/batch/big?state=pending", "en")
	if e := etaOf(pendPage, "p077"); e == "" {
		t.Errorf("the first pending row has no ETA")
	}
	if e := etaOf(page("/batch/big?state=pending&page=3", "en"), "p119"); e == "" {
		t.Errorf("the last pending row has no ETA")
	}
	last := rows(page("/batch/big?state=pending&page=3", "en"))
	if len(last) != 20 || last[19][3] != "120" {
		t.Errorf("the last page of pending lists %d rows, the last at %q; want 20, the last at 120", len(last), last[len(last)-1][3])
	}
	if got := rows(page("/batch/big?state=pending&page=99", "en")); len(got) != 20 {
		t.Errorf("a page past the end shows %d rows, want the last page's 20", len(got))
	}
	failed := page("/batch/big?state=failed", "en")
	if got := rows(failed); len(got) != 1 || got[0][2] != "f1" || !strings.Contains(failed, `<td translate="no">content filter</td>`) || !strings.Contains(failed, `class="state state-failed">failed<`) {
		t.Errorf("failed filter: %v\n%s", got, failed)
	}
	if got := rows(page("/batch/big?state=success", "en")); len(got) != 1 || got[0][6] != "d1" {
		t.Errorf("a task with no content is named by its id: %v", got)
	}
	zh := page("/batch/big?state=failed", "zh-CN")
	for _, want := range []string{"任务列表", `>全部 <span class="num">122</span>`, `>失败 <span`, "第 1 页，共 1 页"} {
		if !strings.Contains(zh, want) {
			t.Errorf("the Chinese batch page lacks %q", want)
		}
	}
}

func TestTaskName(t *testing.T) {
	for _, tc := range []struct{ title, content, want string }{
		{"", "Write the launch copy\nfor spring", "Write the launch copy for spring"},
		{"春季上新 · 文案", "Write the launch copy", "春季上新 · 文案"},
		{"", strings.Repeat("word ", 20), "word word word word word word word word word word word…"},
		{"a\x1b[31mred", "x", `a\x1b[31mred`},
	} {
		if got := taskName(tc.title, tc.content); got != tc.want {
			t.Errorf("taskName(%q, %q) = %q, want %q", tc.title, tc.content, got, tc.want)
		}
	}
}

// TestTurnsTogether: a conversation's turns are listed together, each
// follow-up after the turn it continues; the rest keep their order.
func TestTurnsTogether(t *testing.T) {
	r := func(id, follows string) report.Row { return report.Row{TaskID: id, FollowUp: follows} }
	for _, tc := range []struct {
		name string
		in   []report.Row
		want string
	}{
		{"no conversation", []report.Row{r("a", ""), r("b", "")}, "a b"},
		{"three turns among others", []report.Row{r("draft", ""), r("other", ""), r("shorter", "draft"), r("x", ""), r("title", "shorter")}, "draft shorter title other x"},
		{"a parent elsewhere", []report.Row{r("a", ""), r("f", "gone")}, "a f"},
		{"a planted cycle", []report.Row{r("a", ""), r("p", "q"), r("q", "p")}, "a p q"},
	} {
		var got []string
		for _, x := range turnsTogether(tc.in) {
			got = append(got, x.TaskID)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, got, tc.want)
		}
	}
}

// TestHTTPServer_BatchWaits: a pending chained task's row says which
// parents it waits for, in the page's language.
func TestHTTPServer_BatchWaits(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	tk := taskfile.Task{TaskID: "child", ModelKind: taskfile.KindAPI, Model: "writer", Batch: "b1", After: []string{"a6"},
		Content: "{{a6.result}}", State: taskfile.StatePending, SubmittedAt: time.Now()}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spool.NewLayout(cfg.Spool).TaskPath(taskfile.KindAPI, taskfile.DirPending, "child"), data, spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	if _, body := get(t, h, "/batch/b1?state=pending"); !regexp.MustCompile(`data-id="child">.*?<td[^>]*>waits for a6</td></tr>`).Match(body) {
		t.Errorf("the chained task's row does not say what it waits for:\n%s", body)
	}
}

package console

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestHTTPServer_TaskWaits: a pending task's page and its batch row say
// where it stands and why it waits, in the page's language: its place in
// the lane's queue, its ETA, an account held by a usage limit (until
// when, and the site's words), a model's 429.
func TestHTTPServer_TaskWaits(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t) // web paused, w3 and w4 pending on ops1; api a5..a7 pending
	store := spool.NewStore(cfg, nil)
	until := time.Now().Add(time.Hour)
	if err := store.HoldAccount(taskfile.Hold{Account: "ops1", Until: until, Reason: "已达到使用上限", Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	quota := time.Now().Add(10 * time.Minute)
	info := func() []taskfile.LaneInfo {
		return []taskfile.LaneInfo{{Kind: taskfile.KindAPI, Concurrency: 3, Quota: map[string]time.Time{"writer": quota}}}
	}
	h := startTestHTTP(t, cfg, info)
	defer h.Stop()
	// As the pages write them (a date when not today: near midnight).
	clock, clockEN := clockZH(time.Now(), until), report.ShortTime(time.Now(), until)
	tests := []struct {
		path, lang string
		want       []string
	}{
		{"/task/web/w3", "en", []string{"<th>held</th><td translate=\"no\">account ops1 held by a usage limit until " + clockEN + ": 已达到使用上限</td>"}},
		{"/task/web/w3", "zh-CN", []string{"<th>等待原因</th><td translate=\"no\">账号 ops1 因用量限制暂停至 " + clock + "：已达到使用上限</td>"}},
		{"/task/api/a6", "en", []string{"<th>queue</th><td>2 of 3</td>", "<th>eta</th><td>", "model writer&#39;s quota is spent (429) until "}},
		{"/task/api/a6", "zh-CN", []string{"<th>排队位置</th><td>第 2 位，共 3 个</td>", "<th>预计完成</th><td>", "模型 writer 的额度已用尽（429），暂停至 " + clockZH(time.Now(), quota)}},
		{"/batch/b2?state=pending", "zh-CN", []string{"账号 ops1 因用量限制暂停至 " + clock + "：已达到使用上限</td></tr>"}},
	}
	for _, tc := range tests {
		resp, body := getIn(t, h, tc.path, tc.lang)
		for _, w := range tc.want {
			if resp.StatusCode != 200 || !strings.Contains(string(body), w) {
				t.Errorf("%s in %s lacks %q:\n%s", tc.path, tc.lang, w, body)
			}
		}
	}
	// A running row on the batch page says how long it has run, and on
	// which account.
	run := taskfile.Task{TaskID: "w9", ModelKind: taskfile.KindWeb, Model: "thinker", Batch: "b9", Title: "春茶文案", Content: "x", State: taskfile.StateRunning,
		Attempt: 1, Account: "ops1", SubmittedAt: time.Now().Add(-time.Hour), StartedAt: time.Now().Add(-90 * time.Second)}
	data, err := run.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spool.NewLayout(cfg.Spool).TaskPath(taskfile.KindWeb, taskfile.DirRunning, "w9"), data, spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	if _, body := getIn(t, h, "/batch/b9", "zh-CN"); !regexp.MustCompile(`data-id="w9">.*>春茶文案</a>.*<td translate="no">已用时 1m3\ds · 账号 ops1`).Match(body) {
		t.Errorf("the running row does not say its title, time and account:\n%s", body)
	}
	// A running task has an ETA and no wait; a done one neither.
	if _, body := getIn(t, h, "/task/api/a4", "en"); !strings.Contains(string(body), "<th>eta</th>") || strings.Contains(string(body), "<th>held</th>") {
		t.Errorf("the running task's page:\n%s", body)
	}
	if _, body := getIn(t, h, "/task/api/a1", "en"); strings.Contains(string(body), "<th>eta</th>") || strings.Contains(string(body), "<th>queue</th>") {
		t.Errorf("the done task's page shows a queue:\n%s", body)
	}
}

// TestHeldHTML: every kind of held line reads in Chinese, with no English
// word outside what it marks as data or code, and a planted reason is
// escaped; in English it is the snapshot's message.
func TestHeldHTML(t *testing.T) {
	now := time.Now()
	until := now.Add(time.Hour)
	marked := regexp.MustCompile(`<span translate="no">.*?</span>|<code>.*?</code>`)
	word := regexp.MustCompile(`[A-Za-z]{2,}`)
	for _, h := range []status.Held{
		{Kind: status.HeldPaused},
		{Kind: status.HeldPaused, Host: "night-box"},
		{Kind: status.HeldAccount, Hold: status.HoldDisabled, Account: "ops1", Count: 2},
		{Kind: status.HeldAccount, Hold: status.HoldLimit, Account: "ops1", Count: 2, Until: &until, Reason: "You've hit the limit <b>now</b>"},
		{Kind: status.HeldAccount, Hold: taskfile.HoldSignedOut, Account: "ops1", Count: 1, Site: "chat", Reason: "Log in"},
		{Kind: status.HeldAccount, Hold: taskfile.HoldChallenge, Account: "ops1", Count: 1, Site: "chat"},
		{Kind: status.HeldAccount, Hold: taskfile.HoldPaused, Account: "ops1", Count: 1, Reason: "maintenance"},
		{Kind: status.HeldAccount, Hold: "unreadable", Account: "ops1", Count: 1, Reason: "yaml: bad"},
		{Kind: status.HeldPaced, Account: "ops1", Count: 3, Until: &until, Reason: "minGap 5m"},
		{Kind: status.HeldStandby, Holder: "host:12"},
		{Kind: status.HeldStandby},
		{Kind: status.HeldRunner, PID: 42, Host: "there", Count: 1},
		{Kind: status.HeldDeferred, Count: 2, Until: &until},
		{Kind: status.HeldChain, Count: 1, Task: "article", Parents: []string{"outline"}},
		{Kind: status.HeldChain, Count: 30},
	} {
		h.Message = "the English message"
		zh := string(heldHTML(labelsZH, now, "web", h))
		if left := word.FindAllString(marked.ReplaceAllString(zh, ""), -1); len(left) > 0 || !strings.ContainsFunc(zh, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff }) {
			t.Errorf("%+v in Chinese: %s (English: %q)", h, zh, left)
		}
		if strings.Contains(zh, "<b>") {
			t.Errorf("a planted reason is not escaped: %s", zh)
		}
		if en := string(heldHTML(labelsEN, now, "web", h)); en != `<span translate="no">the English message</span>` {
			t.Errorf("%+v in English: %s", h, en)
		}
	}
}

// TestWaitText: every wait reads in both languages; the account's name
// and the site's words are kept as written.
func TestWaitText(t *testing.T) {
	now := time.Now()
	until := now.Add(time.Hour)
	cjk := func(s string) bool {
		return strings.ContainsFunc(s, func(r rune) bool { return r >= 0x4e00 && r <= 0x9fff })
	}
	for _, w := range []status.Wait{
		{Kind: status.HeldPaused}, {Kind: status.HeldDeferred, Until: &until}, {Kind: status.HeldQuota, Model: "gpt", Until: &until},
		{Kind: status.HeldPaced, Account: "ops1", Reason: "minGap 5m", Until: &until},
		{Kind: status.HeldAccount, Account: "ops1", Hold: status.HoldDisabled}, {Kind: status.HeldAccount, Account: "ops1, ops2", Hold: status.HoldDisabled},
		{Kind: status.HeldAccount, Account: "ops1", Hold: status.HoldLimit, Until: &until, Reason: "limit"},
		{Kind: status.HeldAccount, Account: "ops1", Hold: taskfile.HoldSignedOut}, {Kind: status.HeldAccount, Account: "ops1", Hold: taskfile.HoldChallenge},
		{Kind: status.HeldAccount, Account: "ops1", Hold: taskfile.HoldPaused, Reason: "note"}, {Kind: status.HeldAccount, Account: "ops1", Hold: "unreadable", Reason: "bad"},
	} {
		en, zh := waitText(labelsEN, now, &w), waitText(labelsZH, now, &w)
		if en == "" || cjk(en) || !cjk(zh) || (w.Account != "" && (!strings.Contains(en, w.Account) || !strings.Contains(zh, w.Account))) ||
			(w.Reason != "" && !strings.Contains(zh, w.Reason)) || (w.Until != nil && !strings.Contains(zh, clockZH(now, until))) {
			t.Errorf("%+v: %q / %q", w, en, zh)
		}
	}
}

// TestFold: a long content or log is folded under a line that says how
// long it is, a short one shown as it is; both escaped.
func TestFold(t *testing.T) {
	long := strings.Repeat("第一行 <b>\n", foldLines+1)
	for _, tc := range []struct {
		D          detailLabels
		text, want string
		folded     bool
	}{
		{detailEN, "short <b>", `<pre class="content">short &lt;b&gt;</pre>`, false},
		{detailEN, long, `<details class="fold"><summary>show all: 31 lines, 434 bytes</summary><pre class="content">第一行 &lt;b&gt;`, true},
		{detailZH, long, `<summary>展开全部：31 行，434 字节</summary>`, true},
		{detailEN, strings.Repeat("x", foldBytes+1), `<summary>show all: 1 lines, 4001 bytes</summary>`, true},
	} {
		got := string(fold(tc.D, "content", tc.text))
		if !strings.Contains(got, tc.want) || strings.Contains(got, "<details") != tc.folded || strings.Contains(got, "<b>") {
			t.Errorf("fold(%.20q) = %.300s", tc.text, got)
		}
	}
}

package console

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool/fixture"
)

// TestHTTPServer_PageFailures: the page lists a lane's rejected drops and
// the failed tasks, with their reasons, in either language.
func TestHTTPServer_PageFailures(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, fixture.Spool(t), nil)
	defer h.Stop()
	page := func(lang string) string {
		_, b := getIn(t, h, "/", lang)
		return string(b)
	}
	en := page("en")
	for _, want := range []string{
		"<caption>rejected drops, newest first</caption>",
		`<td translate="no">drop.yaml</td><td translate="no">nope: unknown field</td></tr>`,
		"<h2>failed tasks, newest first</h2>",
		// Named by its content's first words, its id in the tooltip.
		`<tr class="failed-task"><td translate="no"><a href="/task/api/a3" title="api/a3">x</a></td><td translate="no"><a href="/batch/b1">b1</a></td>`,
	} {
		if !strings.Contains(en, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if zh := page("zh-CN"); !strings.Contains(zh, "失败的任务") || !strings.Contains(zh, "被拒收的文件") || !strings.Contains(zh, "drop.yaml") {
		t.Errorf("the Chinese page lacks the failure lists")
	}
}

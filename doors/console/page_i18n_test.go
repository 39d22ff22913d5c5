package console

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool/fixture"
)

func TestLabelsFor(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   string
	}{
		{"", "en"},
		{"zh-CN", "zh-CN"},
		{"zh-CN,zh;q=0.9,en;q=0.8", "zh-CN"},
		{"zh", "zh-CN"},
		{"zh-TW", "zh-CN"},
		{"zh-Hans-CN", "zh-CN"},
		{"zh-HK", "zh-CN"},
		{"zh-Hant", "zh-CN"},
		{"zh-Hant-TW", "zh-CN"},
		{"zh-SG", "zh-CN"},
		{"zh-MO,en;q=0.5", "zh-CN"},
		{"zh-TW,en-US;q=0.9,en;q=0.8", "zh-CN"},
		{"zh-HK,en;q=0.8", "zh-CN"},
		{"zh-Hant,en;q=0.9", "zh-CN"},
		{"yue-HK", "en"},
		{"en-US,en;q=0.9", "en"},
		{"en-US,en;q=0.9,zh-CN;q=0.8", "en"},
		{"fr-FR", "en"},
		{"de;q=0.9,zh;q=0.5", "zh-CN"},
		{"garbage;;;q=x", "en"},
		{"*", "en"},
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if tc.header != "" {
			r.Header.Set("Accept-Language", tc.header)
		}
		if got := labelsFor(r).Lang; got != tc.want {
			t.Errorf("Accept-Language %q: page in %s, want %s", tc.header, got, tc.want)
		}
	}
}

// TestHTTPServer_PageChinese fetches / as a browser set to Chinese and as
// one set to English, and checks the labels of each.
func TestHTTPServer_PageChinese(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	fetch := func(lang string) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+h.Addr().String()+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Language", lang)
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Vary"), "Accept-Language") {
			t.Errorf("%s: status %d, Vary %q", lang, resp.StatusCode, resp.Header.Get("Vary"))
		}
		return string(body)
	}
	zh := fetch("zh-CN,zh;q=0.9,en;q=0.8")
	for _, want := range []string{`<html lang="zh-CN">`, "<title>spoolgate 状态</title>", "<th>等待中</th>", "<th>运行中</th>",
		"<th>成功</th>", "<th>失败</th>", "<th>已取消</th>", "<th>被拒收</th>", "<h2>批次</h2>", "已暂停", "预计完成", "受阻：", "api 通道", "并发 3"} {
		if !strings.Contains(zh, want) {
			t.Errorf("Chinese page lacks %q", want)
		}
	}
	for _, gone := range []string{"<th>pending</th>", "<h2>batches</h2>", "PAUSED", ">ETA ", "held: ", "refreshes every"} {
		if strings.Contains(zh, gone) {
			t.Errorf("Chinese page still shows %q", gone)
		}
	}
	en := fetch("en-US,en;q=0.9")
	for _, want := range []string{`<html lang="en">`, "<title>spoolgate status</title>", "<th>pending</th>", "<h2>batches</h2>", "PAUSED", "held: "} {
		if !strings.Contains(en, want) {
			t.Errorf("English page lacks %q", want)
		}
	}
	if strings.Contains(en, "等待中") {
		t.Error("English page shows Chinese labels")
	}
}

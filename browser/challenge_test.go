//go:build linux

package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// challengePages are stand-in pages, each what a site shows: the chat page
// (input, answer, signed-out link) or a challenge of one kind. A frame's
// address only has to name the vendor: every page here is on 127.0.0.1.
var challengePages = map[string]string{
	"/chat":        `<title>Chat</title><textarea class="input"></textarea><div class="msg">Answer: what does "Verify you are human" mean? 安全验证 is a captcha.</div>`,
	"/signedout":   `<title>Chat</title><a class="login" href="/login">Sign in</a>`,
	"/cf-frame":    `<title>Chat</title><textarea class="input"></textarea><iframe src="/frame?h=challenges.cloudflare.com/cdn-cgi/challenge-platform" width="300" height="65"></iframe>`,
	"/cf-moment":   `<title>Just a moment...</title><div>Checking your browser before accessing the site.</div>`,
	"/cf-form":     `<title>Attention Required</title><form id="challenge-form" action="/"><input type="hidden" name="r"></form><p>One more step</p>`,
	"/hcaptcha":    `<title>Chat</title><textarea class="input"></textarea><iframe src="/frame?h=newassets.hcaptcha.com/captcha/v1/checkbox" width="300" height="80"></iframe>`,
	"/recaptcha":   `<title>Sign in</title><iframe title="reCAPTCHA" src="/frame?h=www.google.com/recaptcha/api2/anchor" width="304" height="78"></iframe>`,
	"/recaptchav3": `<title>Chat</title><textarea class="input"></textarea><iframe src="/frame?h=www.google.com/recaptcha/api2/anchor&size=invisible" width="256" height="60"></iframe>`,
	"/geetest":     `<title>Chat</title><textarea class="input"></textarea><div class="geetest_panel geetest_wind"><div class="geetest_slider_button" style="width:40px;height:40px">→</div></div>`,
	"/geetest-off": `<title>Chat</title><textarea class="input"></textarea><div class="geetest_panel" style="display:none"><div class="geetest_slider">x</div></div>`,
	"/anquan":      `<title>安全验证</title><div>请完成安全验证后继续访问</div>`,
	"/renji":       `<title>提示</title><div>请进行人机验证</div>`,
	"/verify":      `<title>Security check</title><h1>Verify you are human by completing the action below.</h1>`,
	"/own":         `<title>Chat</title><textarea class="input"></textarea><div class="slide-verify" style="width:200px;height:40px">drag</div>`,
}

func TestDriver_Challenge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/frame" {
			_, _ = w.Write([]byte(`<p>frame</p>`))
			return
		}
		body, ok := challengePages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`<!doctype html><html><head><meta charset="utf-8">` + body + `</html>`))
	}))
	defer srv.Close()
	ctx := tab(t)
	site := config.SiteConfig{URL: srv.URL + "/chat", Input: ".input", Send: "button.send", Answer: ".msg", LoggedOut: "a.login", Challenge: ".slide-verify"}
	for _, c := range []struct {
		path string
		kind string // "": no hold
		what string // in the hold's reason
	}{
		{"/chat", "", ""}, // the words on a chat page with its input are no challenge
		{"/signedout", taskfile.HoldSignedOut, "signed-out link"},
		{"/cf-frame", taskfile.HoldChallenge, "Cloudflare"},
		{"/cf-moment", taskfile.HoldChallenge, "Just a moment"},
		{"/cf-form", taskfile.HoldChallenge, "Cloudflare"},
		{"/hcaptcha", taskfile.HoldChallenge, "hCaptcha"},
		{"/recaptcha", taskfile.HoldChallenge, "reCAPTCHA"},
		{"/recaptchav3", "", ""}, // an invisible badge asks nothing of a person
		{"/geetest", taskfile.HoldChallenge, "GeeTest"},
		{"/geetest-off", "", ""}, // a hidden slider is no challenge
		{"/anquan", taskfile.HoldChallenge, "安全验证"},
		{"/renji", taskfile.HoldChallenge, "人机验证"},
		{"/verify", taskfile.HoldChallenge, "Verify you are human"},
		{"/own", taskfile.HoldChallenge, ".slide-verify"},
	} {
		t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
			d := newDriver(site, "stand", Timings{PageLoad: 10 * time.Second, InputGrace: 300 * time.Millisecond, Poll: 50 * time.Millisecond}, nil)
			octx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			_, err := d.openURL(octx, srv.URL+c.path)
			h := attempt.HoldOf(err)
			if c.kind == "" {
				if err != nil {
					t.Fatalf("no hold wanted: %v", err)
				}
				return
			}
			if h == nil || h.Kind != c.kind || !strings.Contains(h.Reason, c.what) || !h.Until.IsZero() || h.Site != "stand" {
				t.Fatalf("hold %+v (err %v), want kind %q naming %q", h, err, c.kind, c.what)
			}
			if attempt.Classify(err) != taskfile.ClassAccount {
				t.Errorf("class %s", attempt.Classify(err))
			}
		})
	}
}

//go:build linux

package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// Issue 49: the page saved for a failed attempt is the document as
// displayed. On the stand-in's signed-in page with its planted secrets
// (an inline boot token and JSON state, a CSRF meta and hidden input,
// data-* values, a localStorage value, an HttpOnly session cookie) and a
// key of the config's shown in the page, none of them is in what is
// saved, and what the page displays still is.
func TestDisplayedPage_NoSecrets(t *testing.T) {
	needChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Scale: 0.01, Secrets: true, SignedIn: "demo", Renderer: "markdown-it"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	ctx := tab(t)
	const known = "sk-known-config-key-4f7a9c"
	if err := chromedp.Do(ctx, chromedp.Navigate(stand.URL())); err != nil {
		t.Fatal(err)
	}
	if stored, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.insertAdjacentHTML('beforeend', '<p class="shown">the key `+known+` shown</p>'); localStorage.getItem('refresh_token')`)); err != nil || stored != chatstand.SecretLocal {
		t.Fatalf("the page stored %q (%v), want the planted value", stored, err)
	}
	html, err := displayedPage(ctx, []string{known})
	if err != nil {
		t.Fatal(err)
	}
	secrets := append([]string{known, chatstand.SecretBootToken, chatstand.SecretEmail, chatstand.SecretCSRF, chatstand.SecretLocal}, stand.SessionValues()...)
	if len(secrets) < 6 {
		t.Fatalf("the stand-in issued no session: %v", secrets)
	}
	for _, s := range secrets {
		if strings.Contains(html, s) {
			t.Errorf("the saved page holds the secret %q", s)
		}
	}
	for _, bad := range []string{"<script", "data-", `type="hidden"`, "csrf-token"} {
		if strings.Contains(html, bad) {
			t.Errorf("the saved page holds %s", bad)
		}
	}
	for _, want := range []string{"Signed in as", "demo", "the key [masked] shown", `aria-label="Message"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the saved page lost what the page displays: %q", want)
		}
	}
}

package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromiumNames are the browsers a test may drive, in order of preference.
var chromiumNames = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// NeedChromium returns the Chromium to test with. Without one it skips
// the test, or fails it under CI=true (CI installs Chromium: a missing
// one there is a broken CI, not a reason to skip).
func NeedChromium(t testing.TB) string {
	t.Helper()
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but no Chromium (tried %v)", chromiumNames)
	}
	t.Skipf("no Chromium (tried %v): install the chromium package to run the browser tests", chromiumNames)
	return ""
}

// StandinSite is the `sites:` entry named standin for the chat-page
// stand-in (examples/chatstand) served at url: its page's own selectors,
// exactly as examples/site-standin.yaml has them (a test there holds the
// two in step).
func StandinSite(url string) string {
	return fmt.Sprintf(`  standin:
    url: %q
    input: "textarea.input"
    send: "button[type=submit]"
    answer: ".message.assistant"
    busy: "button.stop"
    loggedOut: "a.login"
    newChat: "button.new-chat"
    error: ".error"
    promptInput: "textarea.system"
    upload: "button.attach"
    attached: ".attachment-chip"
`, url)
}

// StandinMarkdownSite is the `sites:` entry named standin-md for the chat
// stand-in as a modern chat page (chatstand.Options.Renderer, or the
// ?renderer= of url): its keys name the page by roles, labels and data
// attributes only, so they hold with random class names too, exactly as
// examples/site-standin.yaml has them.
func StandinMarkdownSite(url string) string {
	return fmt.Sprintf(`  standin-md:
    url: %q
    input: "[aria-label='Message']"
    send: "[aria-label='Send message']"
    answer: "[data-message-author-role='assistant']"
    busy: "[aria-label='Stop generating']"
    loggedOut: "a[href^='/login']"
    newChat: "[aria-label='New chat']"
    error: "#log ~ [role=alert]"
    promptInput: "textarea[placeholder^='Default instructions']"
    upload: "[aria-label='Attach files']"
    attached: "[aria-label='Attachments'] [data-name]"
    conversation: "/c/[^/?#]+"
    userMessage: "[data-message-author-role='user']"
    history: "nav[aria-label='Chat history'] a[href^='/c/']"
    notFound: "[role=alert]:has(~ #log)"
    done: "[aria-label='Message actions']"
    copy: "[aria-label='Message actions'] [aria-label='Copy']"
    errorTurn: "[role=alert]"
    chrome: [":has(> [aria-label='Copy code'])"]
    network: {url: /api/conversation, format: sse, path: delta, reasoning: reasoning}
`, url)
}

// ChromiumOptions are the options for a test's own headless Chromium at
// path on a throwaway profile: quiet (no background networking, sync,
// extensions) and fit for a container (no sandbox, no /dev/shm).
func ChromiumOptions(t testing.TB, path string) []chromedp.ExecAllocatorOption {
	return chromiumOptions(path, t.TempDir())
}

func chromiumOptions(path, profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
		chromedp.WindowSize(1200, 900),
	}
}

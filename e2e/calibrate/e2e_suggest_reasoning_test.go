//go:build linux

package calibrate

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/examples/chatuistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eReasoningUIKeys are the hand-written keys of the two reasoning chat
// libraries' pages (examples/chatuis), as an operator writes them from
// DevTools and the README: the stream's answer field with its thinking
// field beside it.
var e2eReasoningUIKeys = map[string]string{
	"antdx": `    input: "textarea[placeholder='Ask anything']"
    send: ".ant-sender-actions-btn"
    answer: ".ant-bubble-start .x-markdown"
    thinking: ".ant-think-content"
    busy: ".ant-sender-actions-btn-loading-button"
    done: ".ant-bubble-start .ant-actions"
    network: {url: /api/chat, format: sse, path: choices.0.delta.content, reasoning: choices.0.delta.reasoning_content}
`,
	"tdesign": `    input: "textarea[placeholder='有问题，尽管问']"
    send: ".t-chat__input__button"
    answer: ".cherry-markdown"
    busy: ".t-chat__input__button__stop"
    network: {url: /api/chat, format: sse, path: choices.0.delta.content, reasoning: choices.0.delta.reasoning_content}
`,
}

// Issue 39's calibration acceptance, on two real AI-chat libraries from
// npm that draw a reasoning model's thinking in a collapsible block of
// the answer's bubble, as their own examples do (Ant Design X's Think,
// TDesign's ChatThinking; the thinking streamed as
// delta.reasoning_content, then the answer as delta.content), and on the
// stand-in's reasoning page: `site new NAME --url URL --probe` (the
// default probe, a Markdown document asked for) proposes the answer
// field as network.path and the thinking field as network.reasoning,
// never the thinking block as answer, busy only for what lasts to the
// stream's end, and nothing a probe finds at high confidence unless a
// second probe confirmed it; `check --suggest --write` keeps working
// hand-written keys. Its block, pasted unchanged, and the
// libraries' hand-written keys (the stand-in's are TestE2E_Web_Reasoning's)
// each run a task (4 in `make soak`) through `spoolgate run`: every answer exact, every
// thinking exactly in reasoning and never in the result, verified.
func TestE2E_Suggest_Reasoning(t *testing.T) {
	t.Parallel()
	testkit.NeedChromium(t)
	stands := map[string]*chatuistand.Server{}
	var tail, models strings.Builder
	for _, ui := range chatuistand.ReasoningUIs {
		s, err := chatuistand.Start(chatuistand.Options{UI: ui, Step: 30 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stands[ui] = s
		fmt.Fprintf(&tail, "  %s:\n    url: %q\n%s", ui, s.URL(), e2eReasoningUIKeys[ui])
		fmt.Fprintf(&models, "  - {name: %[1]s, kind: web, site: %[1]s, needEmptyPrompt: true}\n", ui)
	}
	// The stand-in signs the profile in (e2eNewSites); its model is
	// left for TestE2E_Web_Reasoning to run.
	keys := testkit.StandinMarkdownSite("x")
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true, Tail: tail.String()}, 0.005,
		&rig.Site{Name: "think", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField}, Keys: keys[strings.Index(keys, "    input:"):], Model: models.String() + "  # the stand-in %[1]s: TestE2E_Web_Reasoning runs its hand-written keys\n"})
	// 1. site new on each page, with the default probe (the stand-in's
	// with deep thinking on).
	urls := map[string]string{"think-auto": sr.Site["think"].Stand.URL() + "?deep=1"}
	for _, ui := range chatuistand.ReasoningUIs {
		urls[ui+"-auto"] = stands[ui].URL()
	}
	var autoSites, autoModels strings.Builder
	for _, name := range []string{"think-auto", "antdx-auto", "tdesign-auto"} {
		code, out, errOut := sr.Run("site", "new", name, "--url", urls[name], "--probe")
		t.Logf("site new %s:\n%s%s", name, out, errOut)
		if code != 0 {
			t.Errorf("%s: site new exited %d", name, code)
			continue
		}
		block := out[strings.Index(out, "\nsites:\n")+len("\nsites:\n"):]
		if !strings.Contains(block, "path: choices.0.delta.content, reasoning: choices.0.delta.reasoning_content}") && !strings.Contains(block, "path: delta, reasoning: reasoning}") {
			t.Errorf("%s: the block does not read the answer field with the thinking apart:\n%s", name, block)
		}
		// A probe's key is high only once a second probe confirmed it
		// (newChat is found at rest, before any probe).
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, " [high] ") && !strings.HasPrefix(l, "  newChat ") && !strings.HasSuffix(l, "confirmed by a second probe") {
				t.Errorf("%s: high without a second probe's confirmation: %s", name, l)
			}
		}
		autoSites.WriteString(block)
		fmt.Fprintf(&autoModels, "  - {name: %[1]s, kind: web, site: %[1]s, needEmptyPrompt: true}\n", name)
	}
	if t.Failed() {
		return
	}
	// 2. `check --suggest --write` on the working hand-written keys: each
	// passes the probe and is kept, and the output says so (busy, judged
	// by the page's clock against the response's end, may be found not
	// to pass on a loaded machine: it is then kept unchanged, as no
	// proposal replaces it).
	code, out, errOut := sr.Run("check", "antdx", "--suggest", "--probe", "--write")
	written, _ := os.ReadFile(sr.CfgPath)
	for _, want := range []string{`answer: ".ant-bubble-start .x-markdown" # passes the probe, kept`, `busy: ".ant-sender-actions-btn-loading-button"`,
		`done: ".ant-bubble-start .ant-actions" # passes the probe, kept`, `thinking: ".ant-think-content"`, "network: {url: /api/chat, format: sse, path: choices.0.delta.content, reasoning: choices.0.delta.reasoning_content}"} {
		if code != 0 || !strings.Contains(string(written), want) {
			t.Errorf("check antdx --suggest --write: exit %d, the config lacks %q:\n%s\nstdout:\n%s%s", code, want, written, out, errOut)
		}
	}
	if !strings.Contains(out, "the config's selector passes the probe: --write keeps it") {
		t.Errorf("check --suggest does not say it keeps what passes:\n%s", out)
	}
	cfg, err := os.ReadFile(sr.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfgText := strings.Replace(string(cfg), "models:\n", "models:\n"+autoModels.String(), 1) + autoSites.String()
	if err := os.WriteFile(sr.CfgPath, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	// 3. Tasks on each site, hand-written and proposed, through the
	// daemon.
	d := sr.Start()
	// `make test` runs the code blocks with quotes and tags (the one
	// that found the stand-in's lost thinking); the CJK table, the
	// release note and the Go program run on these libraries in `make
	// reliability`, and all four on the stand-in in TestE2E_Web_Reasoning.
	corpus := []string{`quotes "double" & <tags> [[md=mixed-code]]`}
	if testkit.Reliability() {
		corpus = append(corpus, "第二个：中文 🚀 [[md=cjk]]", "[[md=release-notes]] a release note", "[[md=go-code]] some Go")
	}
	var tasks []rig.Task
	for _, m := range []string{"think-auto", "antdx", "antdx-auto", "tdesign", "tdesign-auto"} {
		for i, c := range corpus {
			tasks = append(tasks, rig.Task{ID: fmt.Sprintf("%s-%d", m, i), Model: m, Content: c})
		}
	}
	sr.Submit(tasks...)
	for _, tk := range tasks {
		got := sr.Final(taskfile.KindWeb, tk.ID, 3*time.Minute)
		want, think := chatuistand.MarkdownAnswerFor(tk.Content), chatuistand.ThinkingFor(tk.Content)
		if tk.Model == "think-auto" {
			want, think = chatstand.MarkdownFor(tk.Content), chatstand.ThinkingFor(tk.Content, chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3})
		}
		if got.State != taskfile.StateSuccess || got.ResultCheck != "verified" {
			t.Errorf("%s: state %s, resultCheck %s %s, error %q\nlog:\n%s", tk.ID, got.State, got.ResultCheck, got.ResultDiff, got.Error, testkit.Tail(sr.TaskLog(taskfile.KindWeb, tk.ID), 12))
			continue
		}
		if got.Result != want || got.Reasoning != think {
			t.Errorf("%s: by %s %q\nreasoning %q\nwant %q\nand %q", tk.ID, got.ResultMethod, got.Result, got.Reasoning, want, think)
		}
		if strings.Contains(got.Result, chatuistand.ThinkingMark) || strings.Contains(got.Result, "用户的问题是") {
			t.Errorf("%s: the thinking is in the result: %q", tk.ID, got.Result)
		}
	}
	d.Stop()
	if t.Failed() {
		t.Logf("config:\n%s", cfgText)
	}
}

//go:build linux

package calibrate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 55's point 5, calibration on template pages, through the CLI and
// `spoolgate run` on the stand-in:
//
//   - tmpl: the composer of a Next.js chat template, an icon-only send
//     button named by its test id alone (data-testid="send-button")
//     among look-alike test ids (send-button-icon, send-button-tooltip,
//     model-selector). `site new --send hello` finds it, sends its probe
//     and proposes a block that, pasted unchanged, runs tasks.
//   - bare: the same button with no test id at all, which no selector
//     of calibration's own picks out; `check --suggest --send hello
//     --write` sends the probe through the config's own send and writes
//     the answer keys beside it.
//   - think: a reasoning page probed with a greeting (`--send 你好`, as
//     the Chinese guide once said): calibration warns and probes with
//     the structured probe instead, and never proposes the thinking as
//     the answer.
//
// Every task is exact and verified.
func TestE2E_Suggest_TemplatePages(t *testing.T) {
	t.Parallel()
	md := rig.OnceKeys()
	bareKeys := "    input: \"[aria-label='Message']\"\n    send: \"#f button:not([type])\"\n    answer: \".gone-after-a-redesign\"\n"
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005,
		&rig.Site{Name: "tmpl", Opts: chatstand.Options{Renderer: "marked", Template: chatstand.TemplateTestID}, Keys: md,
			Model: "  # %s: site new proposes its keys (tmpl-auto)\n"},
		&rig.Site{Name: "bare", Opts: chatstand.Options{Renderer: "marked", Template: chatstand.TemplateBare}, Keys: bareKeys},
		&rig.Site{Name: "think", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField}, Keys: md,
			Model: "  # %s: site new proposes its keys (think-auto)\n"})
	var autoSites, autoModels strings.Builder
	for _, p := range []struct{ name, url, send string }{
		{"tmpl-auto", sr.Site["tmpl"].Stand.URL(), "hello"},
		{"think-auto", sr.Site["think"].Stand.URL() + "?deep=1", "你好"},
	} {
		block, out, errOut := sr.SiteNew(p.name, "--url", p.url, "--send", p.send)
		switch p.name {
		case "tmpl-auto":
			if !strings.Contains(block, `send: "[data-testid=\"send-button\"]"`) && !strings.Contains(block, `send: '[data-testid="send-button"]'`) {
				t.Errorf("tmpl-auto: send is not the button's test id:\n%s", block)
			}
			if got := sr.Site["tmpl"].Stand.Received(); len(got) == 0 || got[0].Content != "hello" {
				t.Errorf("tmpl-auto: the probe was not sent: %+v", got)
			}
		case "think-auto":
			if !strings.Contains(out+errOut, "a greeting probe on a reasoning page") {
				t.Errorf("think-auto: no warning on the greeting probe")
			}
			if got := sr.Site["think"].Stand.Received(); len(got) < 2 || got[len(got)-1].Content != browser.SecondProbe(browser.DefaultProbe) && got[len(got)-1].Content != browser.DefaultProbe {
				t.Errorf("think-auto: the structured probe was not sent after the greeting: %+v", got)
			}
		}
		autoSites.WriteString(block)
		fmt.Fprintf(&autoModels, "  - {name: %[1]s, kind: web, site: %[1]s, needEmptyPrompt: true}\n", p.name)
	}
	// bare: its own send carries the probe, and the answer keys are
	// written beside it.
	code, out, errOut := sr.Run("check", "bare", "--suggest", "--send", "hello", "--write")
	t.Logf("check bare --suggest:\n%s%s", out, errOut)
	cfg, err := config.LoadConfig(sr.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if sc := cfg.Sites["bare"]; sc.Send != "#f button:not([type])" || sc.Answer == ".gone-after-a-redesign" || sc.Answer == "" {
		t.Errorf("check bare --suggest --write (exit %d): send %q, answer %q", code, sc.Send, sc.Answer)
	}
	if got := sr.Site["bare"].Stand.Received(); len(got) == 0 || got[0].Content != "hello" {
		t.Errorf("bare: the probe was not sent through the config's send: %+v", got)
	}
	if t.Failed() {
		return
	}
	sr.AddSites(autoModels.String(), autoSites.String())
	d := sr.Start()
	var tasks []rig.Task
	for _, m := range []string{"tmpl-auto", "bare", "think-auto"} {
		for i, c := range []string{"[[md=release-notes]] a release note", `quotes "double" & <tags> [[md=mixed-code]]`} {
			tasks = append(tasks, rig.Task{ID: fmt.Sprintf("%s-%d", m, i), Model: m, Content: c})
		}
	}
	sr.Submit(tasks...)
	for _, tk := range tasks {
		got := sr.Final(taskfile.KindWeb, tk.ID, 3*time.Minute)
		want, think := chatstand.MarkdownFor(tk.Content), ""
		if tk.Model == "think-auto" {
			think = chatstand.ThinkingFor(tk.Content, chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3})
		}
		if got.State != taskfile.StateSuccess || got.ResultCheck != "verified" || got.Result != want || got.Reasoning != think {
			t.Errorf("%s: %s by %s, resultCheck %s %s, error %q\nresult %q\nwant   %q\nreasoning %q\nwant      %q\nlog:\n%s", tk.ID, got.State, got.ResultMethod, got.ResultCheck, got.ResultDiff, got.Error,
				got.Result, want, got.Reasoning, think, testkit.Tail(sr.TaskLog(taskfile.KindWeb, tk.ID), 12))
		}
	}
	d.Stop()
}

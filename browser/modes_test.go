//go:build linux

package browser

import (
	"errors"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// reasoningSite is the stand-in's reasoning page as a site (the modern
// page's keys, the thinking's own events, the switches and the model
// menu), and a second site, stuck, whose 深度思考 switch a click does not
// change: a format for fmt.Sprintf with the stand-in's URL.
func reasoningSite() string {
	keys := strings.SplitN(testkit.StandinMarkdownSite("%[1]s"), "\n", 2)[1]
	keys = strings.Replace(keys, "path: delta}", "path: delta, reasoning: reasoning}", 1)
	modes := `    modes:
      deepThink: {switch: "button.deep-think", state: aria-pressed}
      search: {switch: "button.web-search", state: "class:on"}
      model: {menu: "button.model-picker", option: "[role=menuitemradio]"}
`
	stuck := strings.Replace(keys, `url: "%[1]s"`, `url: "%[1]s?stuck=deepThink"`, 1)
	return keys + modes + "  stuck:\n" + stuck + modes
}

// Models of one site and account that differ by mode: before each send
// the page is put in the model's modes and read back; the stand-in's log
// shows each generation ran in its model's mode, the attempt says which
// modes ran, and the thinking (streamed only in deep thinking or by R1)
// is kept apart from the answer. A switch that a click does not change
// fails the attempt as environment, naming the mode and what the page
// showed.
func TestExecutor_Modes(t *testing.T) {
	e := newEnv(t, envOpts{
		stand: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField},
		site:  reasoningSite(),
		models: `  - {name: deep-on, kind: web, site: standin, modes: {deepThink: on, search: off}}
  - {name: deep-off, kind: web, site: standin, modes: {deepThink: off, search: on}}
  - {name: r1, kind: web, site: standin, modes: {model: R1, deepThink: off, search: off}}
  - {name: stuck, kind: web, site: stuck, modes: {deepThink: on}}
`,
	})
	runs := []struct {
		model, ran string
		modes      chatstand.Modes
	}{
		{"deep-on", "deepThink on, search off", chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3}},
		{"deep-off", "deepThink off, search on", chatstand.Modes{Search: true, Model: chatstand.ModelV3}},
		{"deep-on", "deepThink on, search off", chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3}},
		{"r1", "deepThink off, model R1, search off", chatstand.Modes{Model: chatstand.ModelR1}},
	}
	for i, r := range runs {
		content := "[[md=nested-lists]] run " + string(rune('a'+i))
		job, log := e.job(t, r.model, "", content)
		res, err := e.exec.Execute(t.Context(), job)
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", r.model, err, log)
		}
		got := e.stand.GenerationModes()
		if len(got) != i+1 || got[i] != r.modes {
			t.Fatalf("%s: the stand-in's generations ran in %+v, want the last %+v", r.model, got, r.modes)
		}
		think := chatstand.ThinkingFor(content, r.modes)
		if res.Modes != r.ran || res.Text != chatstand.MarkdownFor(content) || res.Reasoning != think || res.Check != CheckVerified {
			t.Errorf("%s: modes %q, reasoning %q, check %s %s; want %q, %q, verified\ntext %q", r.model, res.Modes, res.Reasoning, res.Check, res.CheckDiff, r.ran, think, res.Text)
		}
		if (think != "") != (r.model != "deep-off") {
			t.Errorf("%s: thinking %q", r.model, think)
		}
	}
	job, log := e.job(t, "stuck", "", "[[md=nested-lists]] stuck")
	res, err := e.exec.Execute(t.Context(), job)
	var te *attempt.TaskError
	if !errors.As(err, &te) || te.Class != taskfile.ClassEnvironment ||
		!strings.Contains(err.Error(), `site stuck: mode deepThink: switch "button.deep-think" still reads off after a click (aria-pressed="false"), want on`) {
		t.Fatalf("a stuck switch: %v (%+v)\nlog:\n%s", err, te, log)
	}
	if n := len(e.stand.GenerationModes()); n != len(runs) {
		t.Errorf("the stuck attempt sent: %d generations", n)
	}
	if res.Modes != "" {
		t.Errorf("the stuck attempt says modes %q ran", res.Modes)
	}
}

// Calibration on a reasoning page (thinking in a block inside the
// answer's bubble, streamed in a field of its own before the answer's):
// the answer proposed is the answer, never the thinking block; the
// network key reads the answer field with the thinking field as its
// reasoning, at medium confidence (one probe).
func TestSuggest_Reasoning(t *testing.T) {
	e := newEnv(t, envOpts{stand: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField}})
	probe := "[[md=go-code]] a short Markdown document"
	rep, err := Suggest(t.Context(), e.cfg, "standin", config.SiteConfig{URL: e.stand.URL() + "?deep=1"}, SuggestOptions{Send: probe})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rep.Keys {
		t.Logf("%-8s %-6s %-60s %s", k.Key, k.Confidence, k.Selector, k.Why)
	}
	think := chatstand.ThinkingFor(probe, chatstand.Modes{DeepThink: true})
	if strings.Contains(rep.Answer, "用户的问题是") || !strings.Contains(rep.Answer, "package main") {
		t.Errorf("the answer read %q holds the thinking or lacks the answer", rep.Answer)
	}
	ns, _ := rep.Get("network")
	if ns.Network == nil || ns.Network.Path != "delta" || ns.Network.Reasoning != "reasoning" || ns.Confidence == "high" || rep.NetAnswer != chatstand.MarkdownFor(probe) {
		t.Errorf("network %s [%s] %s: read %q", ns.Selector, ns.Confidence, ns.Why, rep.NetAnswer)
	}
	ans, _ := rep.Get("answer")
	if strings.Contains(ans.Selector, "thinking") || strings.Contains(ans.Selector, "details") || think == "" {
		t.Errorf("the answer proposed is the thinking block: %s", ans.Selector)
	}
}

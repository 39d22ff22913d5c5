package config

import (
	"strings"
	"testing"
)

const modesSite = `
sites:
  deep:
    url: http://127.0.0.1:1/
    input: textarea
    send: button.send
    answer: .answer
    thinking: .thinking
    network: {url: /api/chat, format: sse, path: choices.0.delta.content, reasoning: choices.0.delta.reasoning_content}
    modes:
      deepThink: {switch: "button.deep", state: aria-pressed}
      search: {switch: "button.search", state: "class:on"}
      model: {menu: "button.picker", option: "[role=menuitem]"}
`

func TestParseConfig_Modes(t *testing.T) {
	for _, c := range []struct {
		name, models, err string
	}{
		{"switches and a menu", "{name: r1, kind: web, site: deep, modes: {deepThink: on, search: off, model: Expert}}", ""},
		{"no modes", "{name: r1, kind: web, site: deep}", ""},
		{"keepReasoning false", "{name: r1, kind: web, site: deep, keepReasoning: false}", ""},
		{"unknown mode", "{name: r1, kind: web, site: deep, modes: {turbo: on}}", "models[r1].modes.turbo: site \"deep\" has no mode \"turbo\" (its modes: deepThink, model, search)"},
		{"switch not on or off", "{name: r1, kind: web, site: deep, modes: {deepThink: maybe}}", "models[r1].modes.deepThink: \"maybe\": a switch is on or off"},
		{"switch true", "{name: r1, kind: web, site: deep, modes: {deepThink: true}}", "a switch is on or off"},
		{"api modes", "{name: a, kind: api, baseURL: 'http://127.0.0.1:1/v1', modes: {deepThink: on}}", "models[a].modes: an api model has no page modes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte("models:\n  - " + c.models + "\n" + modesSite))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				m := cfg.Models[0]
				if want := c.name != "keepReasoning false"; m.KeepsReasoning() != want {
					t.Fatalf("KeepsReasoning() = %v, want %v", m.KeepsReasoning(), want)
				}
				if c.name == "switches and a menu" && (m.Modes["deepThink"] != "on" || m.Modes["search"] != "off" || m.Modes["model"] != "Expert") {
					t.Fatalf("modes %v", m.Modes)
				}
				if s := cfg.Sites["deep"]; s.Thinking != ".thinking" || s.Network.Reasoning != "choices.0.delta.reasoning_content" || s.Modes["search"].State != "class:on" {
					t.Fatalf("site %+v", s)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("err %v, want %q", err, c.err)
			}
		})
	}
}

func TestSiteMode_Check(t *testing.T) {
	for _, c := range []struct {
		name string
		mode SiteMode
		err  string
	}{
		{"aria-pressed", SiteMode{Switch: "b", State: "aria-pressed"}, ""},
		{"aria-checked", SiteMode{Switch: "b", State: "aria-checked"}, ""},
		{"class", SiteMode{Switch: "b", State: "class:active"}, ""},
		{"menu", SiteMode{Menu: "b", Option: "li"}, ""},
		{"no state", SiteMode{Switch: "b"}, "state: \"\": want aria-pressed"},
		{"empty class", SiteMode{Switch: "b", State: "class: "}, "want aria-pressed"},
		{"both", SiteMode{Switch: "b", Menu: "m", State: "aria-pressed"}, "a switch or a menu, not both"},
		{"menu without option", SiteMode{Menu: "m"}, "option: missing"},
		{"menu with state", SiteMode{Menu: "m", Option: "li", State: "aria-pressed"}, "state belongs to a switch"},
		{"neither", SiteMode{}, "missing switch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.mode.check()
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("check() = %v, want %q", err, c.err)
			}
		})
	}
}

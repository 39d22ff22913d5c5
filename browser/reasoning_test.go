//go:build linux

package browser

import (
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/spool/config"
)

// A reasoning page (the stand-in's, deep thinking on): its thinking
// streamed in events of its own (delta and whole-so-far) or inline as
// <think>, drawn in a collapsible block inside the answer's bubble. Every
// method gives the answer alone, the thinking apart, and the result check
// compares the answer with the visible answer, not with the thinking.
func TestDriver_ReadAnswer_Reasoning(t *testing.T) {
	stand, ctx := standTab(t)
	for _, v := range []struct {
		name, query string
		net         config.SiteNetwork
	}{
		{"field", "?renderer=marked&reasoning=field&deep=1", config.SiteNetwork{URL: "/api/conversation", Format: config.NetSSE, Path: "delta", Reasoning: "reasoning"}},
		{"field, whole so far", "?renderer=markdown-it&reasoning=field&deep=1&stream=full", config.SiteNetwork{URL: "/api/conversation", Format: config.NetSSE, Path: "text", Reasoning: "reasoningText", Mode: config.NetFull}},
		{"inline think", "?renderer=react-markdown&reasoning=inline&deep=1", config.SiteNetwork{URL: "/api/conversation", Format: config.NetSSE, Path: "delta"}},
	} {
		for _, c := range []string{"go-code", "cjk"} {
			msg := "[[md=" + c + "]] " + v.name
			want, think := chatstand.MarkdownFor(msg), chatstand.ThinkingFor(msg, chatstand.Modes{DeepThink: true})
			if think == "" {
				t.Fatal("the stand-in does not think in deep thinking")
			}
			d, a := askByNetwork(ctx, t, mdSite(t, stand.URL()+v.query), v.net, msg)
			if a.Text != want || a.Reasoning != think || a.Check.State != CheckVerified {
				t.Errorf("%s: network: %q\nthinking %q\ncheck %s %s\nwant %q\nthinking %q", msg, a.Text, a.Reasoning, a.Check.State, a.Check.Diff, want, think)
			}
			for _, m := range []string{MethodCopy, MethodDOM, MethodText} {
				got, format, th, err := d.readOne(ctx, m, nil, nil)
				if err != nil {
					t.Errorf("%s: %s: %v", msg, m, err)
					continue
				}
				if m == MethodCopy && th == "" {
					th = d.pageThinking(ctx)
				}
				switch m {
				case MethodCopy:
					if strings.TrimSpace(got) != want {
						t.Errorf("%s: copy: %q, want %q", msg, got, want)
					}
				case MethodDOM:
					assertSameMarkdown(t, msg+": dom", strings.TrimSpace(got), want)
				case MethodText:
					if strings.Contains(got, "用户的问题是") || strings.Contains(got, "思考") {
						t.Errorf("%s: text holds the thinking: %q", msg, got)
					}
				}
				assertSameMarkdown(t, msg+": "+m+" thinking", th, think)
				if chk, _ := d.pageCheck(ctx, got, format); chk.State != CheckVerified {
					t.Errorf("%s: %s: the answer is %s against the page: %s", msg, m, chk.State, chk.Diff)
				}
			}
		}
	}
}

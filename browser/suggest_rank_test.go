package browser

import (
	"strings"
	"testing"
	"time"
)

func TestRankCandidates(t *testing.T) {
	c := func(sel string, kinds ...string) Candidate {
		return Candidate{Selector: sel, Kinds: kinds, Notes: []string{sel}, Matches: 1}
	}
	tests := []struct {
		key  string
		in   []Candidate
		best string
	}{
		{"send", []Candidate{c(".btn-x", "class"), c("button", "tag"), c(`button[aria-label="Send"]`, "aria")}, `button[aria-label="Send"]`},
		{"send", []Candidate{c("button", "tag"), c(".Composer-sendBtn", "class")}, ".Composer-sendBtn"},
		{"input", []Candidate{c(`textarea[placeholder="Ask"]`, "placeholder"), c(`[data-testid="composer"]`, "testid")}, `[data-testid="composer"]`},
		{"answer", []Candidate{c(".message", "class"), c(`[data-role="assistant"]`, "data"), {Selector: `main [data-role="assistant"] p`, Kinds: []string{"tag", "data"}, Combo: true}}, `[data-role="assistant"]`},
		// Two matches of which the first is the field: it rests on page order.
		{"input", []Candidate{{Selector: "textarea", Kinds: []string{"tag"}, Matches: 2}, c(".chat-input", "class")}, ".chat-input"},
		// Busy: the one that showed for the whole answer beats a brief one.
		{"busy", []Candidate{{Selector: ".typing", Kinds: []string{"class"}, Notes: []string{"typing"}, Cover: 0.1}, {Selector: ".stop", Kinds: []string{"class"}, Notes: []string{"stop"}, Cover: 1}}, ".stop"},
		// Equal scores: the shorter selector.
		{"answer", []Candidate{c(".assistant-message", "class"), c(".assistant", "class")}, ".assistant"},
	}
	for _, tt := range tests {
		got := rankCandidates(tt.key, tt.in)
		if got[0].Selector != tt.best {
			t.Errorf("%s: best %q (%d), want %q; all %+v", tt.key, got[0].Selector, got[0].Score, tt.best, got)
		}
	}
}

func TestConfidence(t *testing.T) {
	tests := []struct {
		key  string
		c    Candidate
		f    found
		want string
	}{
		{"input", Candidate{Score: 90}, found{}, "high"},
		{"input", Candidate{Score: 60}, found{}, "medium"},
		{"input", Candidate{Score: 50}, found{}, "low"},
		{"send", Candidate{Score: 90}, found{Sure: 0}, "low"},
		{"send", Candidate{Score: 90}, found{Sure: 1}, "medium"},
		{"send", Candidate{Score: 90}, found{Sure: 2}, "high"},
		{"busy", Candidate{Score: 95, Cover: 0.2}, found{}, "medium"},
		{"send", Candidate{Score: 95, Matches: 3}, found{Sure: 2}, "medium"},
	}
	for _, tt := range tests {
		if got := confidence(tt.key, tt.c, tt.f); got != tt.want {
			t.Errorf("confidence(%s, %+v, sure %d) = %s, want %s", tt.key, tt.c, tt.f.Sure, got, tt.want)
		}
	}
}

func TestQuietFor(t *testing.T) {
	ans := found{Text: string(make([]rune, 200))}
	busy := Suggestion{Selector: ".stop"}
	tests := []struct {
		name string
		pk   probeKeys
		want time.Duration
	}{
		{"steady stream", probeKeys{Answer: ans, MaxGap: 120, GrowEvents: 30}, 0},
		{"a pause of 1.1 s", probeKeys{Answer: ans, MaxGap: 1100, GrowEvents: 30}, 3 * time.Second},
		{"grew on after busy went", probeKeys{Answer: ans, MaxGap: 100, GrowEvents: 30, Busy: found{Cands: []Candidate{{Selector: ".stop", Lag: 700}}}}, 2 * time.Second},
		{"typed out a character a step", probeKeys{Answer: ans, MaxGap: 30, GrowEvents: 190}, 2 * time.Second},
	}
	for _, tt := range tests {
		if got, why := quietFor(tt.pk, busy); got != tt.want {
			t.Errorf("%s: quiet %s (%s), want %s", tt.name, got, why, tt.want)
		}
	}
}

// The busy rule: present from the send (before the text's first growth)
// to the stream's end: the response's end, or the text's last growth if
// that came first; with no response, over 80 % of the growth. A thinking
// spinner gone mid-stream fails it.
func TestProbeKeys_Spans(t *testing.T) {
	pk := probeKeys{Wall0: 1_000_000, FirstGrowth: 100, LastGrowth: 2000}
	end := pk.at(2100) // the response ended 100 ms after the last growth
	tests := []struct {
		name        string
		first, last float64
		end         time.Time
		want        bool
	}{
		{"the stop button, send to end", 50, 2000, end, true},
		{"gone 150 ms before the text's end: sampling slack", 50, 1850, end, true},
		{"a thinking spinner gone at 900 ms", 50, 900, end, false},
		{"showed only once the answer began", 600, 2000, end, false},
		{"a response held open: the text's end counts", 50, 2000, pk.at(9000), true},
		{"no response: 80 % of the growth", 50, 1700, time.Time{}, true},
		{"no response: half of the growth", 50, 1000, time.Time{}, false},
	}
	for _, tt := range tests {
		if got := pk.spans(tt.first, tt.last, tt.end); got != tt.want {
			t.Errorf("%s: spans %v, want %v", tt.name, got, tt.want)
		}
	}
	pk.Watch = map[string]string{"busy": "span", "done": "ok"}
	pk.Seen = map[string]struct{ First, Last float64 }{"busy": {First: 50, Last: 900}}
	if pk.busyVerdict(end); pk.Watch["busy"] != "went before the stream's end" {
		t.Errorf("busy verdict %q", pk.Watch["busy"])
	}
}

// judgeCurrent: a config selector the probe found working is kept
// (CurrentPasses, and said so); one that failed says why; the config's
// thinking key is reported, never proposed.
func TestSuggestReport_JudgeCurrent(t *testing.T) {
	r := &SuggestReport{Keys: []Suggestion{{Key: "answer", Selector: ".a"}, {Key: "busy", Selector: ".spinner"}, {Key: "input", Selector: "textarea"}}}
	r.judgeCurrent(map[string]string{"answer": "ok", "busy": "went before the stream's end", "thinking": "ok"}, ".think")
	if r.Keys[0].Current != CurrentPasses || !strings.Contains(r.Keys[0].Why, "passes the probe and is kept") {
		t.Errorf("answer: %+v", r.Keys[0])
	}
	if r.Keys[1].Current != "fails the probe: went before the stream's end" || r.Keys[2].Current != "" {
		t.Errorf("busy %+v, input %+v", r.Keys[1], r.Keys[2])
	}
	if th, ok := r.Get("thinking"); !ok || th.Selector != "" || th.Current != CurrentPasses {
		t.Errorf("thinking: %+v", th)
	}
}

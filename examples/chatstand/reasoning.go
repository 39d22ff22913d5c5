package chatstand

import (
	"fmt"
	"net/http"
	"strings"
)

// A reasoning page, as DeepSeek, Kimi, Qwen and Doubao draw theirs
// (Options.Reasoning, ?reasoning=field|inline): 深度思考 (deep thinking)
// and 联网搜索 (web search) switches and a model menu above the message
// field, whose state goes with every send; a send in deep thinking (or
// to the R1 model) streams the model's thinking before its answer, and
// the page draws it in a collapsible block above the answer, inside the
// same bubble (思考中… while it streams, 已深度思考 once it is done,
// then folded).
//
// The thinking goes over the wire one of two ways: "field", events of
// their own, {"reasoning":"…"} (with ?stream=full, {"reasoningText"}:
// the whole thinking so far), before the answer's {"delta"} events; "inline", in the
// answer's own deltas as <think>…</think> before the answer.
const (
	ReasoningField  = "field"
	ReasoningInline = "inline"
)

// Modes is the state of the page's switches and model menu at a send.
type Modes struct {
	DeepThink bool   `json:"deepThink"`
	Search    bool   `json:"search"`
	Model     string `json:"model"`
}

// The model menu's choices; ModelR1 always thinks.
const (
	ModelV3 = "V3"
	ModelR1 = "R1"
)

// String is the modes as the stand-in logs them.
func (m Modes) String() string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	model := m.Model
	if model == "" {
		model = ModelV3
	}
	return fmt.Sprintf("deepThink %s, search %s, model %s", onOff(m.DeepThink), onOff(m.Search), model)
}

// thinks reports whether a send in m streams thinking.
func (m Modes) thinks() bool { return m.DeepThink || m.Model == ModelR1 }

// ThinkingFor is the thinking a send of content in modes m streams ("" when
// m does not think): Markdown that names the modes, so a test can tell
// which modes a generation ran in from its thinking alone; web search
// adds a line of the pages it read.
func ThinkingFor(content string, m Modes) string {
	if !m.thinks() || MarkdownFor(content) == "" {
		return ""
	}
	q := []rune(parseDirectives(content).cleanedText)
	if len(q) > 40 {
		q = append(q[:40], '…')
	}
	var b strings.Builder
	fmt.Fprintf(&b, "用户的问题是：%s\n\n", string(q))
	fmt.Fprintf(&b, "- 模式：%s\n", m)
	if m.Search {
		b.WriteString("- 联网搜索：读了 **3** 个网页\n")
	}
	b.WriteString("- 计划：先列要点，再写成文。")
	return b.String()
}

// reasoningOf is the page load's reasoning option: the server's, or
// ?reasoning=field|inline|off.
func (s *Server) reasoningOf(r *http.Request) string {
	switch v := r.URL.Query().Get("reasoning"); v {
	case ReasoningField, ReasoningInline:
		return v
	case "off":
		return ""
	}
	return s.opts.Reasoning
}

// turnDeltas are a send's stream pieces: its thinking's (field) and its
// answer's, the thinking inline in the answer's when asked.
func (s *Server) turnDeltas(r *http.Request, req chatRequest) (think, answer []string) {
	md := MarkdownFor(req.Content)
	var m Modes
	if req.Modes != nil {
		m = *req.Modes
	}
	th := ThinkingFor(req.Content, m)
	switch s.reasoningOf(r) {
	case ReasoningField:
		if th != "" {
			think = splitDeltas(th)
		}
	case ReasoningInline:
		if th != "" {
			md = "<think>\n" + th + "\n</think>\n\n" + md
		}
	}
	return think, splitDeltas(md)
}

// GenerationModes lists the modes of every admitted send, in order, as
// the page sent them (the zero Modes for a page without switches).
func (s *Server) GenerationModes() []Modes {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Modes
	for _, m := range s.received {
		if m.Refused == "" {
			out = append(out, m.Modes)
		}
	}
	return out
}

// stuckOf is the page load's switch that does not change: the server's
// StuckMode, or ?stuck=NAME.
func (s *Server) stuckOf(r *http.Request) string {
	if v := r.URL.Query().Get("stuck"); v != "" {
		return v
	}
	return s.opts.StuckMode
}

// thinkOpt is the page load's ?name=, else the server's def (the
// thinking's options, and ?links=).
func (s *Server) thinkOpt(r *http.Request, name, def string) string {
	if v := r.URL.Query().Get(name); v != "" {
		return v
	}
	return def
}

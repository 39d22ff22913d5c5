package chatstand

import (
	"embed"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Editors are the rich-text editors the page can use as its input, each a
// bundle of the editor's npm release built by examples/editors/build.sh.
var Editors = []string{"prosemirror", "lexical", "quill"}

//go:embed editors/*.js
var editorJS embed.FS

// Renderers are the Markdown renderers a page with Markdown answers can
// use (Options.Renderer, ?renderer=): "plain" shows the Markdown source as
// text; the others are bundles of npm releases built by
// examples/renderers/build.sh.
var Renderers = []string{"plain", "markdown-it", "marked", "react-markdown"}

//go:embed renderers/*.js
var rendererJS embed.FS

func validRenderer(s string) bool { return slices.Contains(Renderers, s) }

// Inputs are every kind of message field the page can have.
var Inputs = append([]string{"textarea", "input", "contenteditable"}, Editors...)

func validInput(s string) bool { return slices.Contains(Inputs, s) }

// limitError is the page's usage-limit refusal.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// SetLimit makes every session limited for d: the page shows msg in its
// `.limit` element (on load, and in place of an answer when a message is
// sent), and no generation starts. A d of 0 lifts the limit.
func (s *Server) SetLimit(msg string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		s.limit, s.limitUntil = "", time.Time{}
		return
	}
	s.limit, s.limitUntil = msg, time.Now().Add(d)
}

// Limited is how many messages the usage limit refused.
func (s *Server) Limited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

func (s *Server) limitNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit != "" && time.Now().Before(s.limitUntil) {
		return s.limit
	}
	return ""
}

// pageOptions are the options of one page load: the server's, changed
// by the page's query (?renderer=, ?stream=, ?raw=, ?classes=).
type pageOptions struct {
	Renderer string
	Raw      bool
	Random   bool
	Redirect bool
}

func (s *Server) pageOptions(r *http.Request) pageOptions {
	q := r.URL.Query()
	po := pageOptions{Renderer: s.opts.Renderer, Raw: s.opts.RawWhileStreaming, Random: s.opts.RandomClasses, Redirect: s.opts.Redirect}
	if v := q.Get("redirect"); v != "" {
		po.Redirect = v == "1" || v == "true"
	}
	if v := q.Get("renderer"); validRenderer(v) {
		po.Renderer = v
	}
	switch q.Get("raw") {
	case "1", "true":
		po.Raw = true
	case "0", "false":
		po.Raw = false
	}
	switch q.Get("classes") {
	case "random":
		po.Random = true
	case "plain":
		po.Random = false
	}
	if r.PathValue("id") != "" && po.Renderer == "" {
		po.Renderer = "plain" // a conversation page is a modern page
	}
	return po
}

// pageTurn is a turn as the page's state carries it.
type pageTurn struct {
	Content string `json:"content"`
	Answer  string `json:"answer"`
	State   string `json:"state"`
}

type historyItem struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// title is a conversation's name in the history: its first message's
// first line, at most 60 characters.
func (c *conv) title() string {
	if len(c.turns) == 0 {
		return "New chat"
	}
	t, _, _ := strings.Cut(strings.TrimSpace(c.turns[0].content), "\n")
	if utf8.RuneCountInString(t) > 60 {
		t = string([]rune(t)[:60]) + "…"
	}
	return t
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	u, ok := s.user(r)
	if _, err := r.Cookie(s.opts.CookieName); err != nil && s.opts.SignedIn != "" {
		u, ok = s.opts.SignedIn, true
		s.setSession(w, u)
	}
	po := s.pageOptions(r)
	id := r.PathValue("id")
	s.mu.Lock()
	instr, draft := s.instructions, s.draft
	hist := []historyItem{}
	turns := []pageTurn{}
	notFound := false
	if ok && po.Renderer != "" {
		for _, c := range s.history(u) {
			hist = append(hist, historyItem{ID: c.id, Title: c.title()})
		}
		if c, found := s.convs[id]; id != "" && found && c.user == u {
			for _, t := range c.turns {
				turns = append(turns, pageTurn{Content: t.content, Answer: t.text(t.n), State: t.state})
			}
		} else if id != "" {
			notFound = true
		}
	}
	s.mu.Unlock()
	script, renderer := "", ""
	if slices.Contains(Editors, s.opts.Input) {
		script = s.opts.Input
	}
	if po.Renderer != "" && po.Renderer != "plain" {
		renderer = po.Renderer
	}
	cfg := map[string]any{
		"input": s.opts.Input, "renderer": po.Renderer, "raw": po.Raw, "random": po.Random, "redirect": po.Redirect,
		"conversation": id, "notFound": notFound, "turns": turns, "history": hist,
		// ?leave=PATH: the conversation page shows its last answer as
		// still coming and goes to PATH a moment later (a page that
		// redirects away while its answer is read).
		"leave": r.URL.Query().Get("leave"),
		// A reasoning page (reasoning.go): its switches, model menu and
		// thinking block; stuck names a switch a click does not change.
		"socket": s.socketOf(r), "reasoning": s.reasoningOf(r), "stuck": s.stuckOf(r), "deep": r.URL.Query().Get("deep") == "1",
		// ?template=1: the composer of a Next.js chat template (page.html).
		"template": s.templateOf(r),
		// ?convurl=1: the answer's request names the conversation and
		// message in its path (/api/chat/ID/messages/N).
		"convURL": r.URL.Query().Get("convurl") == "1" || s.opts.ConvURL,
		// ?links=button: links drawn as buttons with data-href.
		"links": s.thinkOpt(r, "links", s.opts.Links),
		// A reasoning page's thinking drawn as plain text (?thinkview=plain)
		// and taken away or emptied at the answer's end (?thinkend=remove|empty).
		"thinkView": s.thinkOpt(r, "thinkview", s.opts.ThinkView), "thinkEnd": s.thinkOpt(r, "thinkend", s.opts.ThinkEnd),
		"thinkPos": s.thinkOpt(r, "thinkpos", s.opts.ThinkPos), // ?thinkpos=beside: the block outside the answer's element
	}
	if notFound {
		cfg["conversation"] = ""
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = pageTmpl.Execute(w, map[string]any{
		"LoggedIn": ok, "User": u, "Instructions": instr, "Limit": s.limitNow(),
		"Input": s.opts.Input, "Script": script, "Shadow": s.opts.Shadow,
		"Modern": po.Renderer != "", "Renderer": renderer, "Config": cfg, "NotFound": notFound,
		"History": hist, "ErrTurn": ErrTurn, "Draft": draft, "Challenge": ok && s.challenged(u), "ChallengeSrc": challengeSrc,
		"ThirdParty":  s.opts.ThirdParty,
		"SecretsHead": secretsOn(s.opts.Secrets && ok, secretsHead), "SecretsBody": secretsOn(s.opts.Secrets && ok, secretsBody),
	})
}

// SetDraft puts text in the message field of every page loaded from now
// on (textarea, input and contenteditable), as text left over from an
// earlier visit: a driver must clear the field before it types. ""
// stops it. The modern page also keeps what is typed but not sent, per
// page, in localStorage and shows it again on the next load, as the big
// chat sites keep drafts.
func (s *Server) SetDraft(text string) {
	s.mu.Lock()
	s.draft = text
	s.mu.Unlock()
}

// handleRenderer serves a renderer's bundle.
func (s *Server) handleRenderer(w http.ResponseWriter, r *http.Request) {
	serveBundle(w, r, rendererJS, "renderers/"+r.PathValue("name"))
}

// handleEditor serves an editor's bundle.
func (s *Server) handleEditor(w http.ResponseWriter, r *http.Request) {
	serveBundle(w, r, editorJS, "editors/"+r.PathValue("name"))
}

// serveBundle serves the embedded script name of fsys.
func serveBundle(w http.ResponseWriter, r *http.Request, fsys embed.FS, name string) {
	b, err := fsys.ReadFile(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	_, _ = w.Write(b)
}

// secretsOn is html as trusted template HTML when on, else nothing.
func secretsOn(on bool, html string) template.HTML {
	if !on {
		return ""
	}
	return template.HTML(html) //nolint:gosec // constants of secrets.go
}

// The composers Options.Template draws.
const (
	TemplateTestID = "testid"
	TemplateBare   = "bare"
)

// templateOf is the page load's template option: the server's, or
// ?template=testid|bare|off.
func (s *Server) templateOf(r *http.Request) string {
	switch v := r.URL.Query().Get("template"); v {
	case TemplateTestID, TemplateBare:
		return v
	case "off":
		return ""
	}
	return s.opts.Template
}

// Package chatstand is a stand-in for a vendor's chat page: a small HTTP
// server on 127.0.0.1 and one HTML page, shared by the web lane's tests and
// the demo. It behaves like the pages the field report describes: a login
// that sets a session cookie, answers that stream word by word, a stop
// button while streaming, and an error message with no answer when a second
// generation starts in the same session while one still streams.
//
// Sessions are keyed by user name: two logins of one user are one account,
// and the account admits one generation at a time.
//
// The content of a message may carry directives (see AnswerFor):
// `[[duration=31s]]`, `[[hang]]`, `[[fail=N]]`, `[[empty]]`, `[[nostart]]`
// (the request is taken but nothing ever comes back), `[[cut=N]]` (the
// answer stops after N words and the page offers "Continue generating"),
// `[[limit]]` (the message meets the usage limit: LimitMessage).
//
// The page's message input is a textarea by default; Options.Input puts a
// plain <input>, a contenteditable div or a real rich-text editor from npm
// (ProseMirror, Lexical, Quill: see examples/editors) in its place, and
// Options.Shadow moves the whole chat into a web component's open shadow
// root. Whatever the input, the server records exactly what the page sent.
//
// Options.Renderer makes it a modern chat page: Markdown answers streamed
// over SSE into conversations kept on the server (/c/ID), rendered by real
// Markdown renderers from npm, with copy buttons, code blocks and an action
// bar; README.md describes its DOM, wire format, options and test hooks.
package chatstand

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Error texts the page shows. ErrOneAtATime is the page's own "one message
// at a time" error that the web driver must treat as transient.
const (
	ErrOneAtATime = "Only one message at a time. Wait for the current answer to finish."
	ErrFailed     = "Something went wrong. Please try again."
)

// LimitMessage is the usage-limit message a `[[limit]]` message meets.
const LimitMessage = "Too many requests. Try again in 20 seconds."

// SessionCookie is the name of the session cookie.
const SessionCookie = "chatstand_session"

// DefaultDuration is how long an answer takes, before scaling, when the
// content has no `[[duration=...]]` directive.
const DefaultDuration = 2 * time.Second

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// Options shape a stand-in.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0.
	Addr string
	// Scale multiplies every duration (0 means 1): 0.0166 makes a 31 s
	// answer take about 0.5 s.
	Scale float64
	// Instructions pre-fills the page's "default instructions" field
	// (textarea.system), as some vendors do. Empty by default.
	Instructions string
	// LateCollisions makes the HTTP form (/api/generate) refuse a second
	// generation only after it has taken its whole time, as the field
	// report's collisions did (two browsers that each got far before the
	// session broke): the caller is held as long as a real answer would
	// hold it, then gets 409. Off: refused at once.
	LateCollisions bool
	// Input is the page's message field: "textarea" (default), "input",
	// "contenteditable", or an editor of Editors.
	Input string
	// Shadow puts the chat inside the open shadow root of <chat-app>.
	Shadow bool
	// CookieName is the session cookie's name (default SessionCookie), so
	// two stand-ins on 127.0.0.1 keep two logins in one browser profile:
	// cookies are per host, not per port.
	CookieName string
	// SignedIn, if set, is the user a browser is signed in as when it
	// opens the page with no session cookie at all: the page's answer
	// sets the cookie, as the vendor's would on a profile that signed in
	// before this stand-in started (what `spoolgate login` leaves). It
	// spares a test a browser launched only to sign in. A browser whose
	// cookie no longer names a session (LogoutAll, the account's
	// sign-outs) still sees the signed-out page.
	SignedIn string
	// Renderer makes the page a modern chat page (see README.md): answers
	// stream over SSE from /api/conversation into conversations kept on
	// the server (/c/ID) and render as they arrive with a Markdown
	// renderer from npm: one of Renderers ("plain" shows the text as it
	// is). "" keeps the plain-text page of /api/chat. The page's query
	// ?renderer=NAME overrides it.
	Renderer string
	// NDJSON streams the answer as one JSON object a line
	// (application/x-ndjson, the same objects, {"type":"done"} at the
	// end) instead of SSE; ?wire=ndjson.
	NDJSON bool
	// Redirect makes the page send to an address that answers 307 to
	// /api/conversation, so the stream comes from a redirected request;
	// ?redirect=1.
	Redirect bool
	// StreamFull makes each SSE event carry the whole answer so far
	// ({"text"}) instead of a delta ({"delta"}); ?stream=full|delta.
	StreamFull bool
	// RawWhileStreaming shows the answer's Markdown source while it
	// streams and renders it once it has ended, so the answer's text
	// shrinks at the end; ?raw=1|0.
	RawWhileStreaming bool
	// RandomClasses renames every class of the chat page at random on
	// each load, as a site built with CSS modules does after each deploy:
	// only roles, labels, data attributes and structure stay; ?classes=random|plain.
	RandomClasses bool
	// Reasoning makes the modern page a reasoning page (reasoning.go):
	// ReasoningField or ReasoningInline; ?reasoning=field|inline|off.
	Reasoning string
	// ConvURL makes the modern page post each message to
	// /api/chat/ID/messages/N, its conversation's ID (one the page makes
	// for a new chat) and the message's number in the path, answered as
	// /api/conversation is; ?convurl=1.
	ConvURL bool
	// Links "button" draws every link of an answer as a button that
	// opens its URL from data-href; ?links=button.
	Links string
	// ThinkView "plain" draws a reasoning page's thinking as its text in
	// a pre-wrap block, line breaks and all; ?thinkview=plain.
	ThinkView string
	// ThinkPos "beside" draws a reasoning page's thinking block in the
	// turn just before the answer's element, not inside it; ?thinkpos=beside.
	ThinkPos string
	// ThinkEnd is what a reasoning page does to its thinking block at the
	// answer's end: "remove" takes it away, "empty" keeps its label and
	// drops its text; ?thinkend=remove|empty.
	ThinkEnd string
	// Socket makes the modern page a socket page (socket.go): answers
	// come over a WebSocket the page opens as it loads; ?socket=1.
	Socket bool
	// Template draws the composer as a Next.js chat template does
	// (page.html): TemplateTestID, an icon-only send button named by its
	// test id alone among look-alike test ids, or TemplateBare, the same
	// with no test id at all; ?template=testid|bare.
	Template string
	// Wire makes the modern page's answers speak one of Wires, a chat
	// site's or API's own stream protocol (wires.go); ?wire=NAME.
	Wire string
	// StuckMode names a switch of the reasoning page (deepThink or
	// search) that a click does not change, as a page whose control
	// moved; ?stuck=NAME.
	StuckMode string
	// Secrets plants a signed-in page's secrets and the addresses that
	// answer them (secrets.go), for the secrets sweep.
	Secrets bool
	// ThirdParty is another origin (http://127.0.0.1:PORT) whose
	// analytics script (async), ad frame and tracking pixel the page
	// includes, as real chat pages do: a test points it at a server that
	// never answers, so the page never fires its load event.
	ThirdParty string
}

// Message is one generation request the stand-in received, refused or not.
type Message struct {
	User    string // the session's user
	System  string // the system prompt sent with it ("" when none)
	Content string // the content as sent, directives included
	Refused string // why it was refused ("" when it was answered)
	// Conversation is the conversation an admitted send of a page with a
	// Renderer went into; Regenerate marks the page's Regenerate or Retry.
	Conversation string
	Regenerate   bool
	// Modes are a reasoning page's switches and model at the send: the
	// generation's log of which modes it ran in.
	Modes Modes
	// Files are the SHA-256 of each uploaded file the message carried.
	Files []string
	// At is when the stand-in received it.
	At time.Time
}

// Server is a running stand-in.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	wg   sync.WaitGroup // request handlers that wait on time
	// loginForms counts the sign-in forms served (GET /login without a
	// user): a test typing into the form through a live view waits for it.
	loginForms atomic.Int32

	mu           sync.Mutex
	tokens       map[string]string // cookie token -> user
	active       map[string]int    // user -> generation requests in flight
	maxActive    int
	perAccount   accountCounts // the real rule, per account: see counts.go
	generations  int
	collisions   int
	media        mediaCounts    // generated files served and refused (media.go)
	failuresSeen map[string]int // content -> [[fail]] failures given
	received     []Message
	instructions string
	closed       bool
	limit        string               // the usage-limit message while limited
	limitUntil   time.Time            // the limit ends then
	limited      int                  // requests refused by the limit
	conts        map[string]string    // continuation token -> the rest of the answer
	convs        map[string]*conv     // conversation id -> conversation (see conversations.go)
	draft        string               // SetDraft's leftover composer text
	uploads      []Upload             // every file received (uploads.go)
	challenges   map[string]bool      // users whose pages show a challenge frame (holds.go)
	secretHits   []SecretHit          // requests to the planted addresses (secrets.go)
	sockets      map[string][]*wsConn // the socket pages' WebSockets by user (socket.go)
}

// Start listens (on 127.0.0.1:0 unless opts.Addr says otherwise) and serves
// until Close.
func Start(opts Options) (*Server, error) {
	if opts.Scale <= 0 {
		opts.Scale = 1
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Input == "" {
		opts.Input = "textarea"
	}
	if opts.CookieName == "" {
		opts.CookieName = SessionCookie
	}
	if opts.Renderer != "" && !validRenderer(opts.Renderer) {
		return nil, fmt.Errorf("chatstand: Renderer %q is not one of %v", opts.Renderer, Renderers)
	}
	if !validInput(opts.Input) {
		return nil, fmt.Errorf("chatstand: Input %q is not textarea, input, contenteditable or one of %v", opts.Input, Editors)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("chatstand: listen: %w", err)
	}
	s := &Server{
		opts:         opts,
		ln:           ln,
		done:         make(chan struct{}),
		tokens:       map[string]string{},
		active:       map[string]int{},
		failuresSeen: map[string]int{},
		instructions: opts.Instructions,
		conts:        map[string]string{},
		convs:        map[string]*conv{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET "+ChallengeFramePath, handleChallengeFrame)
	mux.HandleFunc("GET /c/{id}", s.handlePage)
	mux.HandleFunc("GET /editors/{name}", s.handleEditor)
	mux.HandleFunc("GET /renderers/{name}", s.handleRenderer)
	mux.HandleFunc("POST /api/conversation", s.handleConversation)
	mux.HandleFunc("POST /api/conversation/redirect", s.handleRedirect)
	mux.HandleFunc("POST /api/chat/{conv}/messages/{n}", s.handleConversation) // ConvURL: the ids in the path are the page's
	mux.HandleFunc("GET /api/conversation/{id}", s.handleConversationJSON)
	mux.HandleFunc("DELETE /api/conversation/{id}", s.handleForget)
	mux.HandleFunc("GET /api/conversation/{id}/stream", s.handleAttach)
	mux.HandleFunc("POST /api/conversation/{id}/stop", s.handleStop)
	mux.HandleFunc("GET "+SocketPath, s.handleSocket)
	mux.HandleFunc("/login", s.handleLogin)
	mux.HandleFunc("/logout", s.handleLogout)
	mux.HandleFunc("POST /api/chat", s.handleChat)
	mux.HandleFunc("POST /api/upload", s.handleUpload)
	mux.HandleFunc("GET /uploader/dropzone.js", s.handleUploader)
	mux.HandleFunc("POST /api/generate", s.handleGenerate)
	mux.HandleFunc("GET /files/{key}/{name}", s.handleMedia)
	if opts.Secrets {
		mux.HandleFunc("GET "+SessionPath, s.handleSession)
		mux.HandleFunc("GET "+ExportPath, s.handleExport)
		mux.HandleFunc("GET "+SignOutPath, s.handleSignOut)
	}
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the page's address, e.g. http://127.0.0.1:40123/.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Close stops serving, ends streaming and hanging answers, and waits for
// every handler. Safe to call twice.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	err := s.srv.Close()
	s.wg.Wait()
	return err
}

// MaxConcurrent is the most generation requests one user's session had in
// flight at once, refused ones included: 1 means the session never saw two.
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxActive
}

// Generations is how many generations started (refusals not counted).
func (s *Server) Generations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.generations
}

// Collisions is how many requests were refused because the session already
// had a generation streaming.
func (s *Server) Collisions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.collisions
}

// Active is how many generations stream right now, over all sessions.
func (s *Server) Active() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, v := range s.active {
		n += v
	}
	return n
}

// Received lists every generation request in arrival order, with the
// system prompt it carried, so tests can see whether a prompt was sent.
func (s *Server) Received() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.received...)
}

// LogoutAll ends every session: the next page load shows the signed-out
// page, as when the account logged in elsewhere.
func (s *Server) LogoutAll() {
	s.mu.Lock()
	s.tokens = map[string]string{}
	s.mu.Unlock()
}

// Login creates a session for user and returns its cookie value, for tests
// that need a session without a browser.
func (s *Server) Login(user string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = user
	delete(s.challenges, user) // the person who signed in cleared it
	s.mu.Unlock()
	return tok
}

// SetInstructions changes the page's pre-filled default instructions.
func (s *Server) SetInstructions(v string) {
	s.mu.Lock()
	s.instructions = v
	s.mu.Unlock()
}

// signedIn returns the user signed in on r; without one it answers 401
// (the pages' "You are signed out.") and reports false.
func (s *Server) signedIn(w http.ResponseWriter, r *http.Request) (string, bool) {
	u, ok := s.user(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "You are signed out."})
	}
	return u, ok
}

// signedInRequest is signedIn and r's JSON body as a chatRequest; a body
// that does not decode is answered 400.
func (s *Server) signedInRequest(w http.ResponseWriter, r *http.Request) (string, chatRequest, bool) {
	var req chatRequest
	u, ok := s.signedIn(w, r)
	if !ok {
		return u, req, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request: " + err.Error()})
		return u, req, false
	}
	return u, req, true
}

func (s *Server) user(r *http.Request) (string, bool) {
	c, err := r.Cookie(s.opts.CookieName)
	if err != nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.tokens[c.Value]
	return u, ok
}

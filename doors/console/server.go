package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/spoolgate/spoolgate/doors/frontdoor"
	"github.com/spoolgate/spoolgate/doors/liveview"
	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// httpServer is the daemon's read-only window: `/` the status page (with
// its timeline, ?since=), `/task/LANE/ID` a task's page (its screenshots
// under /shot/N, its saved pages as downloads under /page/N),
// `/batch/NAME` a batch's page (?download=csv|jsonl), `/api/status` the
// JSON of `spoolgate status --json`, `/metrics` for Prometheus; with
// logins configured, each behind the login (gate, roles.go). It
// answers GET and HEAD only; nothing on it changes state, except under
// /v1/ and /api/v1/: the front door (doors/frontdoor), served only when
// `tokens:` lists a token. It answers only requests whose Host names it
// (hostGuard: DNS-rebinding protection).
type httpServer struct {
	log     *slog.Logger
	snap    *status.Snapshotter
	names   taskNames // the status page's running and failed tasks' names
	info    func() []taskfile.LaneInfo
	metrics *metrics
	now     func() time.Time
	cfg     *config.Config
	store   *spool.Store // the actions' and the audit trail's
	auth    *auth        // nil: nobody logs in, the pages are read-only

	listenHost string
	addr       net.Addr        // nil when not listening
	door       *frontdoor.Door // the front door (issue 41): nil without tokens:
	live       *liveview.Views // signing in from the page (live.go): nil without logins

	startstop.Base
}

// Start is newHTTPServer and its Start: the server runs when it returns.
// store is the process's one Store (its Cfg the config served).
func Start(ctx context.Context, store *spool.Store, info func() []taskfile.LaneInfo, log *slog.Logger) (*httpServer, error) {
	h, err := newHTTPServer(store, info, log)
	if err != nil {
		return nil, err
	}
	if err := h.Start(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// newHTTPServer checks the config's http ("host:port" or "off") and returns the
// server, not yet listening. Its Hooks work whether it ever serves or not.
func newHTTPServer(store *spool.Store, info func() []taskfile.LaneInfo, log *slog.Logger) (*httpServer, error) {
	cfg := store.Cfg
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if info == nil {
		info = func() []taskfile.LaneInfo { return nil }
	}
	h := &httpServer{log: log, info: info, now: time.Now, cfg: cfg}
	h.store = store
	h.auth = newAuth(cfg.Console, func() time.Time { return h.now() })
	h.newLive()
	h.snap = status.NewSnapshotter(store, info)
	h.metrics = newMetrics(h)
	if len(cfg.Tokens) > 0 {
		h.door = frontdoor.New(store, log.With("component", "door"))
	}
	if cfg.HTTP != "off" {
		host, _, err := net.SplitHostPort(cfg.HTTP)
		if err != nil {
			return nil, fmt.Errorf("http: %q is not host:port or off: %w", cfg.HTTP, err)
		}
		h.listenHost = host
	}
	return h, nil
}

// Start serves on cfg.HTTP until Stop (not until ctx ends: the page stays
// up while the daemon drains). "off" serves nothing; an address that
// cannot be bound (a port in use) is logged as a warning and serves
// nothing either: the daemon runs without its page rather than not at all.
// Started is closed once it listens (or has decided not to).
func (h *httpServer) Start(ctx context.Context) error {
	ctx, ok, started, stopped := h.StartInit(context.WithoutCancel(ctx))
	if !ok {
		return nil
	}
	var ln net.Listener
	if h.cfg.HTTP != "off" {
		var err error
		if ln, err = net.Listen("tcp", h.cfg.HTTP); err != nil {
			h.log.Warn("status page and metrics disabled: cannot listen", "addr", h.cfg.HTTP, "err", err)
		}
	}
	if ln == nil {
		started()
		go func() { <-ctx.Done(); stopped() }()
		return nil
	}
	h.addr = ln.Addr()
	h.startLive(ctx)
	handler := h.handler()
	if h.door != nil { // the door's paths take POST with a bearer token; the rest is the console's
		handler = frontdoor.Mount(handler, h.door)
	}
	srv := &http.Server{
		Handler:           newHostGuard(h.listenHost, h.addr, h.cfg.Host, h.log, handler),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       2 * time.Minute, // an upload of maxUpload over a slow link
		WriteTimeout:      2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		var err error
		if h.cfg.Console.TLSOn() {
			err = srv.ServeTLS(ln, h.cfg.Console.TLS.Cert, h.cfg.Console.TLS.Key)
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.log.Error("http server stopped", "err", err)
		}
	}()
	go func() {
		defer stopped()
		<-ctx.Done()
		// Stop: wait up to 2 s for requests in flight.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		<-served
		h.stopLive() // every view's browser closed, its session let go
	}()
	scheme := "http"
	if h.cfg.Console.TLSOn() {
		scheme = "https"
	}
	h.log.Info("status page", "url", scheme+"://"+h.addr.String()+"/", "login", h.auth != nil)
	if h.door != nil {
		h.log.Info("front door", "url", scheme+"://"+h.addr.String()+"/v1", "tokens", len(h.cfg.Tokens), "remote", h.cfg.Door.Remote)
	}
	warnIfOpen(h.log, h.addr, h.cfg.Console)
	started()
	return nil
}

// handler is the console's routes: the read-only pages, and with logins
// configured the login, the actions and the forms, behind authorize.
func (h *httpServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", h.page)
	mux.HandleFunc("/api/status", h.apiStatus)
	mux.HandleFunc("/task/{lane}/{id}", h.taskPage)
	mux.HandleFunc("/task/{lane}/{id}/shot/{n}", h.taskFile)
	mux.HandleFunc("/task/{lane}/{id}/page/{n}", h.taskFile)
	mux.HandleFunc("/task/{lane}/{id}/file/{name}", h.artifactFile)
	mux.HandleFunc("/batch/{name...}", h.batchPage)
	mux.Handle("/metrics", promhttp.HandlerFor(h.metrics.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(h.log.Handler(), slog.LevelWarn)}))
	mux.HandleFunc("/login", h.loginPage)
	mux.HandleFunc("/logout", h.logout)
	mux.HandleFunc("/action", h.action)
	mux.HandleFunc("/console.js", h.consoleScript)
	mux.HandleFunc("/submit", h.submitPage)
	mux.HandleFunc("/import", h.importPage)
	mux.HandleFunc("/live/{account}", h.livePage)
	mux.HandleFunc("/live/{account}/frame", h.liveFrame)
	mux.HandleFunc("/live/{account}/open", h.liveOpen)
	mux.HandleFunc("/live/{account}/input", h.liveInput)
	mux.HandleFunc("/live/{account}/close", h.liveClose)
	return readOnly(h.gate(mux))
}

// Addr is the address served, or nil when not listening.
func (h *httpServer) Addr() net.Addr { return h.addr }

// Hooks feed the counters and histograms of /metrics; give them to the lanes.
func (h *httpServer) Hooks() lanes.Hooks {
	if h.door != nil {
		return h.metrics.hooks().And(h.door.Hooks())
	}
	return h.metrics.hooks()
}

// postPaths are the only paths that take a POST (each behind authorize,
// or the login's own checks).
var postPaths = map[string]bool{"/login": true, "/logout": true, "/action": true, "/submit": true, "/import": true}

// readOnly refuses every method but GET and HEAD, and POST on postPaths.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (postPaths[r.URL.Path] || livePost(r.URL.Path)) {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func (h *httpServer) apiStatus(w http.ResponseWriter, r *http.Request) {
	st, err := h.snap.Snapshot(h.now())
	if err != nil {
		h.log.Warn("status snapshot", "err", err)
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = report.WriteStatusJSON(w, st)
}

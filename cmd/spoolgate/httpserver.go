package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/status"
)

// httpServer is the daemon's read-only window: `/` the status page, `/api/status`
// the JSON of `spoolgate status --json`, `/metrics` for Prometheus. It
// answers GET and HEAD only; nothing on it changes state. It answers only
// requests whose Host names it (hostGuard: DNS-rebinding protection).
type httpServer struct {
	log     *slog.Logger
	snap    *status.Snapshotter
	info    func() []spool.LaneInfo
	metrics *metrics
	now     func() time.Time

	srv  *http.Server
	addr net.Addr // nil when not listening

	stopOnce sync.Once
	done     chan struct{}
}

// startHTTP serves on cfg.HTTP until Stop (not until ctx ends: the page
// stays up while the daemon drains). "off" serves nothing; an address that
// cannot be bound (a port in use) is logged as a warning and serves
// nothing either: the daemon runs without its page rather than not at all.
// Only a malformed address is an error. The result is never nil on success,
// so Hooks and Stop may always be called.
func startHTTP(ctx context.Context, cfg *spool.Config, info func() []spool.LaneInfo, log *slog.Logger) (*httpServer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if info == nil {
		info = func() []spool.LaneInfo { return nil }
	}
	h := &httpServer{log: log, info: info, now: time.Now, done: make(chan struct{})}
	h.snap = status.NewSnapshotter(cfg, info)
	h.metrics = newMetrics(h)
	if cfg.HTTP == "off" {
		close(h.done)
		return h, nil
	}
	listenHost, _, err := net.SplitHostPort(cfg.HTTP)
	if err != nil {
		return nil, fmt.Errorf("http: %q is not host:port or off: %w", cfg.HTTP, err)
	}
	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		log.Warn("status page and metrics disabled: cannot listen", "addr", cfg.HTTP, "err", err)
		close(h.done)
		return h, nil
	}
	h.addr = ln.Addr()
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", h.page)
	mux.HandleFunc("/api/status", h.apiStatus)
	mux.Handle("/metrics", promhttp.HandlerFor(h.metrics.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}))
	base := context.WithoutCancel(ctx)
	h.srv = &http.Server{
		Handler:           newHostGuard(listenHost, h.addr, cfg.Host, log, readOnly(mux)),
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(h.done)
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "err", err)
		}
	}()
	log.Info("status page", "url", "http://"+h.addr.String()+"/")
	warnIfOpen(log, h.addr)
	return h, nil
}

// Addr is the address served, or nil when not listening.
func (h *httpServer) Addr() net.Addr { return h.addr }

// Stop shuts the server down, waiting up to 2s for requests in flight, and
// returns when its goroutine has ended. Safe to call twice.
func (h *httpServer) Stop() {
	h.stopOnce.Do(func() {
		if h.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := h.srv.Shutdown(ctx); err != nil {
				_ = h.srv.Close()
			}
		}
	})
	<-h.done
}

// Hooks feed the counters and histograms of /metrics; give them to the lanes.
func (h *httpServer) Hooks() lanes.Hooks { return h.metrics.hooks() }

// readOnly refuses every method but GET and HEAD.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	_ = writeStatusJSON(w, st)
}

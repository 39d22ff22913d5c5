// Package frontdoor is the HTTP front door onto the queue: a JSON task API
// under /api/v1/ and an OpenAI-compatible /v1/chat/completions and
// /v1/models, whose requests become ordinary durable tasks through the
// Store, exactly once per idempotency key.
package frontdoor

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Door serves the front door's routes. Build it with New; mount it with
// Mount. Its tasks are ordinary tasks: it drops them through the Store
// into the lanes' incoming/ folders and reads them back from the lanes'
// folders, as `spoolgate submit` and `spoolgate results` do.
type Door struct {
	cfg    *config.Config
	st     *spool.Store
	log    *slog.Logger
	tokens map[string]*token // by the hex SHA-256 of the token
	waits  waiters
	now    func() time.Time
	mux    *http.ServeMux

	idLocks [64]sync.Mutex // one submit of a taskId at a time in this process (idLock)
	turns   turnsCache     // the conversations of the token's done tasks (turns.go)
}

// token is one of `tokens:`, with its rate limiter.
type token struct {
	name string
	hash string // "sha256:HEX", as in the config
	cfg  config.TokenConfig
	lim  *rate.Limiter // nil: no limit
}

// New returns the door of store's spool (the process's one Store, with
// the installation's key: the door reads the records the daemon seals);
// log is its component's logger. A door without tokens answers every
// request with 401.
func New(store *spool.Store, log *slog.Logger) *Door {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := store.Cfg
	d := &Door{cfg: cfg, st: store, log: log, tokens: map[string]*token{}, now: time.Now}
	d.waits.init()
	for _, name := range cfg.TokenNames() {
		tc := cfg.Tokens[name]
		tk := &token{name: name, hash: tc.Hash, cfg: tc}
		if r, burst, _ := config.TokenRate(tc.Rate); r > 0 {
			tk.lim = rate.NewLimiter(rate.Limit(r), burst)
		}
		d.tokens[strings.TrimPrefix(tc.Hash, config.TokenHashPrefix)] = tk
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", d.chat)
	mux.HandleFunc("GET /v1/models", d.models)
	mux.HandleFunc("POST "+submitPath, d.submitTasks)
	mux.HandleFunc("GET /api/v1/tasks/{lane}/{id}", d.getTask)
	mux.HandleFunc("GET /api/v1/tasks/{lane}/{id}/wait", d.waitTask)
	mux.HandleFunc("POST /api/v1/tasks/{lane}/{id}/cancel", d.cancelTask)
	mux.HandleFunc("POST /api/v1/tasks/{lane}/{id}/retry", d.retryTask)
	d.mux = mux
	return d
}

// Mount returns a handler that sends the door's paths (/v1/ and /api/v1/)
// to d and every other path to next.
func Mount(next http.Handler, d *Door) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") || strings.HasPrefix(r.URL.Path, "/api/v1/") {
			d.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Hooks wake the requests that wait on a task when a lane of this daemon
// changes it; a task another daemon runs is seen by polling.
func (d *Door) Hooks() lanes.Hooks {
	wake := func(k taskfile.Kind, t *taskfile.Task) { d.waits.wake(k, t.TaskID) }
	return lanes.Hooks{
		OnAccept:       wake,
		OnAttemptStart: wake,
		OnAttemptEnd:   func(k taskfile.Kind, t *taskfile.Task, _ time.Duration) { wake(k, t) },
		OnFinal:        wake,
		OnReclaim:      wake,
	}
}

// ServeHTTP checks the peer, the token and its rate, then routes.
func (d *Door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if !d.cfg.Door.Remote && !loopbackPeer(r.RemoteAddr) {
		writeError(w, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "remote_refused",
			Msg: "the front door answers this machine only (door.remote: false)"})
		return
	}
	tk, aerr := d.auth(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	// A submit of N tasks costs N: submitTasks charges it once it has
	// read how many; every other request costs one.
	if !(r.Method == http.MethodPost && r.URL.Path == submitPath) && !d.charge(w, tk, 1) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, d.cfg.Door.MaxBody)
	d.mux.ServeHTTP(w, r.WithContext(withToken(r.Context(), tk)))
}

// submitPath is POST's route of the JSON task API's submit.
const submitPath = "/api/v1/tasks"

// charge spends n of the token's rate, all or nothing: over it, the
// request is refused with 429 and nothing of it is done. n above the
// rate's burst can never pass: its 429 says so, without Retry-After.
func (d *Door) charge(w http.ResponseWriter, tk *token, n int) bool {
	if tk.lim == nil {
		return true
	}
	now := d.now()
	res := tk.lim.ReserveN(now, n)
	if !res.OK() {
		writeError(w, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
			Msg: fmt.Sprintf("%d tasks in one request is over token %s's rate (%s), which allows %d at most at once: nothing was submitted; send fewer at a time", n, tk.name, tk.cfg.Rate, tk.lim.Burst())})
		return false
	}
	if delay := res.DelayFrom(now); delay > 0 {
		res.CancelAt(now)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(delay.Seconds()))))
		msg := "token " + tk.name + " is over its rate (" + tk.cfg.Rate + ")"
		if n > 1 {
			msg += fmt.Sprintf(": the %d tasks of this request would pass it; nothing was submitted", n)
		}
		writeError(w, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded", Msg: msg})
		return false
	}
	return true
}

// auth finds the request's bearer token among `tokens:`. The token is
// compared by its SHA-256 only, and never logged.
func (d *Door) auth(r *http.Request) (*token, *apiError) {
	h := r.Header.Get("Authorization")
	bearer, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || strings.TrimSpace(bearer) == "" {
		return nil, &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "missing_api_key",
			Msg: "no token: send Authorization: Bearer TOKEN (spoolgate token new NAME makes one)"}
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(bearer)))
	tk := d.tokens[hex.EncodeToString(sum[:])]
	if tk == nil {
		d.log.Info("refused a request: unknown token", "remote", r.RemoteAddr, "path", r.URL.Path)
		return nil, &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
			Msg: "the token is not one of this daemon's tokens"}
	}
	return tk, nil
}

// loopbackPeer reports whether addr (host:port) is this machine's.
func loopbackPeer(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

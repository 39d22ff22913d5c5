package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/doors/liveview"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Signing in from the page (issue 42): /live/ACCOUNT is an account's live
// view (doors/liveview) for a logged-in operator: the page, its frames
// (/live/ACCOUNT/frame?after=N, a long poll), and three POSTs behind
// authorize (CSRF): /live/ACCOUNT/open, input and close. Every opening
// and every end is in the audit trail (live-open, live-close).
//
// Holding for sign-in (issue 53): while a task runs on the account the
// view cannot open (spool.ErrSessionBusy), and the lane may hand the
// account its next task the moment this one ends. So open with hold=1
// first places the account's operator pause (actions.PauseAccount, as
// the status page's button; the running task is not interrupted) in the
// live view's own name (liveHoldBy), and the page's script asks to open
// again every 2 s until the account is free: no request waits on the
// server. When the view ends, however it ends, liveEnded releases that
// pause if the hold file is still the one the view placed (its kind and
// by); any other hold stays. A page left before the view opened leaves
// the pause in place, shown on the status page with its release button.

// framePoll is how long a frame request waits for a new frame.
const framePoll = 20 * time.Second

// livePost reports whether path is one of the live views' POSTs.
func livePost(path string) bool {
	rest, ok := strings.CutPrefix(path, "/live/")
	if !ok {
		return false
	}
	acct, verb, ok := strings.Cut(rest, "/")
	return ok && acct != "" && (verb == "open" || verb == "input" || verb == "close")
}

// LivePath is the path of account's live view on the console.
func LivePath(account string) string { return "/live/" + url.PathEscape(account) }

// LiveURL is the link to account's live view on the console that cfg
// serves: its address (the config's host name when it listens on every
// address, as the Host check allows), https with console.tls.
func LiveURL(cfg *config.Config, account string) (string, error) {
	if !cfg.Console.LoginOn() {
		return "", errors.New("the console has no login (console.users or console.token): nobody could open the live view")
	}
	host, port, err := net.SplitHostPort(cfg.HTTP)
	if err != nil {
		return "", fmt.Errorf("http: %q serves no console (want host:port)", cfg.HTTP)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = cfg.Host
	}
	scheme := "http"
	if cfg.Console.TLSOn() {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + LivePath(account), nil
}

// newLive builds the live views (nil without logins: nobody could open
// one).
func (h *httpServer) newLive() {
	if h.auth == nil {
		return
	}
	h.live = liveview.New(liveview.Options{Cfg: h.cfg, Log: h.log.With("component", "liveview")})
	h.SetLiveHooks(nil, nil)
}

// SetLiveHooks connects the live views to the daemon: onSignedIn is called
// when an account's page shows signed in (it ends the account's hold);
// free, before a view launches its browser on an account's profile (a
// warm browser of the session closes). Either may be nil; safe without
// logins.
func (h *httpServer) SetLiveHooks(onSignedIn func(account string), free func(ctx context.Context, account string) error) {
	h.live.SetHooks(liveview.Hooks{OnSignedIn: onSignedIn, Free: free, OnEnd: h.liveEnded, Alive: h.auth.alive})
}

// liveEnded writes a view's end in the audit trail, then releases the
// pause its operator's live view placed for sign-in, if any.
func (h *httpServer) liveEnded(e liveview.Ended) {
	detail := fmt.Sprintf("account %s: %s after %s", e.Account, e.Reason, h.now().Sub(e.Opened).Round(time.Second))
	if e.SignedIn {
		detail += ", signed in"
	}
	h.liveAudit(e, "live-close", detail)
	h.releaseLiveHold(e)
}

func (h *httpServer) liveAudit(e liveview.Ended, action, detail string) {
	if err := h.store.AppendAudit(spool.AuditEntry{Time: h.now(), User: e.Operator, Remote: e.Remote, Door: spool.DoorLive, Action: action, Detail: detail}); err != nil {
		h.log.Error("audit trail: not written", "action", action, "user", e.Operator, "err", err)
	}
}

// liveHoldBy is the by of the pause a live view of user places for
// sign-in: the hold's reason reads "paused by 王芳 (live view, held for
// sign-in)", and releaseLiveHold knows the hold by it.
func liveHoldBy(user string) string { return user + " (live view, held for sign-in)" }

// isLiveHold reports whether hd is the pause a live view of user placed.
func isLiveHold(hd taskfile.Hold, user string) bool {
	return hd.Kind == taskfile.HoldPaused && hd.By == liveHoldBy(user)
}

// The answers to open with hold=1 (its X-Live-Hold header).
const (
	holdPlaced = "placed" // this request paused the account
	holdOurs   = "ours"   // the operator's live view had paused it already
	holdOther  = "other"  // another hold runs (a pause, a limit, signed out): left as it is
)

// holdForSignIn pauses the account for user's live view unless a hold
// runs already, and writes the audit line of a pause it placed.
func (h *httpServer) holdForSignIn(r *http.Request, user, acct string) (string, error) {
	now := h.now()
	if hd, ok := h.store.AccountHold(acct); ok && hd.Active(now) {
		if isLiveHold(hd, user) {
			return holdOurs, nil
		}
		return holdOther, nil
	}
	if err := actions.PauseAccount(h.store, acct, liveHoldBy(user), now); err != nil {
		return "", fmt.Errorf("pause account %s: %w", acct, err)
	}
	h.audit(r, user, "pause-account", nil, "", "account "+acct+": held for sign-in from the live view")
	return holdPlaced, nil
}

// releaseLiveHold ends the account's pause when the hold file is still
// the one a live view of the ended view's operator placed; a pause by
// anyone else (the status page's, `spoolgate pause --account`), or a hold
// that replaced it, stays. Between the look and the release another hold
// could be written; ReleaseAccount would end that one (the store has no
// compare-and-remove), a window of one file read.
func (h *httpServer) releaseLiveHold(e liveview.Ended) {
	hd, ok := h.store.AccountHold(e.Account)
	if !ok || !isLiveHold(hd, e.Operator) {
		return
	}
	was, err := h.store.ReleaseAccount(e.Account)
	if err != nil {
		h.log.Error("live view: its hold for sign-in is not released", "account", e.Account, "err", err)
		return
	}
	if was {
		h.liveAudit(e, "release", "account "+e.Account+": the live view's hold for sign-in, ended with the view ("+e.Reason+")")
	}
}

func (h *httpServer) startLive(ctx context.Context) {
	if h.live != nil {
		_ = h.live.Start(ctx)
	}
}

func (h *httpServer) stopLive() {
	if h.live != nil {
		h.live.Stop()
	}
}

// liveSession is the request's logged-in session, or nil after answering
// 401 (or 404 without logins).
func (h *httpServer) liveSession(w http.ResponseWriter, r *http.Request) *session {
	L := labelsFor(r).actions()
	if h.auth == nil {
		http.Error(w, L.ReadOnly, http.StatusNotFound)
		return nil
	}
	s := h.auth.session(r)
	if s == nil {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, L.NoSession+": /login", http.StatusUnauthorized)
		return nil
	}
	return s
}

// livePage is GET /live/ACCOUNT.
func (h *httpServer) livePage(w http.ResponseWriter, r *http.Request) {
	s := h.liveSession(w, r)
	if s == nil {
		return
	}
	acct := r.PathValue("account")
	v := liveView{L: liveLabelsFor(r), Account: acct, CSRF: s.csrf, User: s.user}
	sess, ok := h.cfg.WebSession(acct)
	code := http.StatusOK
	switch {
	case !ok || sess.Site == "":
		v.Err, code = fmt.Sprintf(v.L.NoAccount, acct), http.StatusNotFound
	default:
		v.Site = sess.Site
		if cur := h.live.Get(acct); cur != nil && !cur.Owner(s.id) {
			v.Err, code = inUse(v.L, cur.Operator, cur.Opened), http.StatusConflict
		}
	}
	h.renderLive(w, &v, code)
}

func inUse(L liveLabels, who string, since time.Time) string {
	return fmt.Sprintf(L.InUse, who, since.Local().Format("15:04"))
}

// liveFrame is GET /live/ACCOUNT/frame?after=N: the next frame (200,
// image/jpeg), or none within framePoll (204); the headers carry the
// state. A view that ended is 410, another operator's 409.
func (h *httpServer) liveFrame(w http.ResponseWriter, r *http.Request) {
	s := h.liveSession(w, r)
	if s == nil {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	L := liveLabelsFor(r)
	v := h.liveOwned(w, r, s)
	if v == nil {
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	ctx, cancel := context.WithTimeout(r.Context(), framePoll)
	defer cancel()
	f, st := v.Frame(ctx, after)
	hd := w.Header()
	hd.Set("X-Live-Signed-In", strconv.FormatBool(st.SignedIn))
	if st.Ended != "" {
		http.Error(w, L.Ended+": "+st.Ended, http.StatusGone)
		return
	}
	if f.Seq <= after {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	hd.Set("X-Live-Seq", strconv.FormatInt(f.Seq, 10))
	hd.Set("X-Live-Width", strconv.FormatFloat(f.Width, 'f', -1, 64))
	hd.Set("X-Live-Height", strconv.FormatFloat(f.Height, 'f', -1, 64))
	hd.Set("Content-Type", "image/jpeg")
	hd.Set("Content-Length", strconv.Itoa(len(f.JPEG)))
	_, _ = w.Write(f.JPEG)
}

// liveOpen is POST /live/ACCOUNT/open: it opens the view for this
// operator, or says who has it. With hold=1 it first holds the account
// for sign-in (holdForSignIn; X-Live-Hold says how). A refusal the page
// may try again (a task running, another operator's view) carries
// X-Live-Retry: busy or in-use.
func (h *httpServer) liveOpen(w http.ResponseWriter, r *http.Request) {
	s := h.authorize(w, r)
	if s == nil {
		return
	}
	L := liveLabelsFor(r)
	acct := r.PathValue("account")
	w.Header().Set("Cache-Control", "no-store")
	if r.PostFormValue("hold") != "" {
		if sess, ok := h.cfg.WebSession(acct); !ok || sess.Site == "" {
			http.Error(w, fmt.Sprintf(L.NoAccount, acct), http.StatusNotFound)
			return
		}
		how, err := h.holdForSignIn(r, s.user, acct)
		if err != nil {
			h.log.Warn("live view: the account is not held for sign-in", "account", acct, "user", s.user, "err", err)
			http.Error(w, L.NotHeld+": "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("X-Live-Hold", how)
	}
	_, opened, err := h.live.Open(r.Context(), acct, s.user, s.id, h.client(r))
	var iu *liveview.InUseError
	switch {
	case errors.As(err, &iu):
		w.Header().Set("X-Live-Retry", "in-use")
		http.Error(w, inUse(L, iu.Operator, iu.Since), http.StatusConflict)
		return
	case errors.Is(err, liveview.ErrNoSession):
		http.Error(w, fmt.Sprintf(L.NoAccount, acct), http.StatusNotFound)
		return
	case errors.Is(err, spool.ErrSessionBusy):
		w.Header().Set("X-Live-Retry", "busy")
		http.Error(w, fmt.Sprintf(L.Busy, acct), http.StatusConflict)
		return
	case errors.Is(err, spool.ErrLockHeld):
		http.Error(w, fmt.Sprintf(L.Held, acct)+": "+err.Error(), http.StatusConflict)
		return
	case err != nil:
		h.log.Warn("live view: not opened", "account", acct, "user", s.user, "err", err)
		http.Error(w, L.NotOpened+": "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if opened {
		h.audit(r, s.user, "live-open", nil, "", "account "+acct)
	}
	w.WriteHeader(http.StatusNoContent)
}

// liveOwned is the operator's open view of the path's account, or nil
// after answering (410 none, 409 another operator's).
func (h *httpServer) liveOwned(w http.ResponseWriter, r *http.Request, s *session) *liveview.View {
	L := liveLabelsFor(r)
	v := h.live.Get(r.PathValue("account"))
	if v == nil {
		http.Error(w, L.NotOpen, http.StatusGone)
		return nil
	}
	if !v.Owner(s.id) {
		http.Error(w, inUse(L, v.Operator, v.Opened), http.StatusConflict)
		return nil
	}
	return v
}

// ownedPost is the gate of a POST to the operator's open view: authorize
// (a login, CSRF), then liveOwned.
func (h *httpServer) ownedPost(w http.ResponseWriter, r *http.Request) *liveview.View {
	s := h.authorize(w, r)
	if s == nil {
		return nil
	}
	return h.liveOwned(w, r, s)
}

// liveInput is POST /live/ACCOUNT/input: one mouse, wheel, key or text event.
func (h *httpServer) liveInput(w http.ResponseWriter, r *http.Request) {
	v := h.ownedPost(w, r)
	if v == nil {
		return
	}
	num := func(k string) float64 { f, _ := strconv.ParseFloat(r.PostFormValue(k), 64); return f }
	in := liveview.Input{Kind: r.PostFormValue("kind"), X: num("x"), Y: num("y"), Button: r.PostFormValue("button"),
		DX: num("dx"), DY: num("dy"), Key: r.PostFormValue("key"), Code: r.PostFormValue("code"),
		VK: int64(num("vk")), Mods: int64(num("mods")), Text: r.PostFormValue("text")}
	err := v.Input(r.Context(), in)
	var bad *liveview.ErrBadInput
	switch {
	case errors.As(err, &bad):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, liveview.ErrEnded):
		http.Error(w, err.Error(), http.StatusGone)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// liveClose is POST /live/ACCOUNT/close: the operator ends the view (the audit
// line comes from its end, as for an idle one).
func (h *httpServer) liveClose(w http.ResponseWriter, r *http.Request) {
	v := h.ownedPost(w, r)
	if v == nil {
		return
	}
	v.Close("closed")
	w.WriteHeader(http.StatusNoContent)
}

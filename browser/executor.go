// Package browser runs web models: it owns the Chromium lifecycle on this
// instance's own profile (self-check, single-instance check, launch, sure
// close) and drives a chat page described only by a config.SiteConfig.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/browser/generated"
	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// defaultProbeTimeout bounds the heartbeat's CDP round-trip.
const defaultProbeTimeout = 5 * time.Second

// Executor is the web lane's attempt.Executor: one attempt is self-check →
// single-instance check → launch → drive the chat page → close, with the
// close on every path but a success, whose browser a warm session keeps
// for its next task (warm.go).
type Executor struct {
	cfg *config.Config
	log *slog.Logger

	// Timings of the page; zero fields take the site's keys or the
	// defaults (page load 60 s, start 60 s, quiet 1 s).
	Timings Timings
	// HoldScale multiplies the hold of a usage limit (0 means 1); tests
	// shorten a "try again in 2 minutes" this way. The daemon reads it
	// from SPOOLGATE_HOLD_SCALE.
	HoldScale float64
	// ProbeTimeout bounds the heartbeat probe; default 5 s.
	ProbeTimeout time.Duration

	profile    string        // the session's browser profile
	closeGrace time.Duration // tests shorten it; 3 s otherwise
	mu         sync.Mutex    // one attempt at a time, whatever the caller
	// closing is the last successful attempt's browser close, which runs
	// after the result went back (the result is written at once, not
	// after the close); the next attempt waits for it before its
	// self-check, so one profile never has two browsers.
	closing chan struct{}
	// warm is the browser kept for the next task (web.warm), if any.
	warm     *warm
	launches atomic.Int64 // browsers started, for tests and the bench
}

// NewExecutor returns the web executor for cfg.
func NewExecutor(cfg *config.Config, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Executor{cfg: cfg, log: log.With("component", "browser"), profile: ProfileDir(cfg), closeGrace: closeGrace}
}

// ForSession returns an executor with e's settings for one web session:
// its browser runs on the session's own profile, and its self-check finds
// and kills leftovers of that profile only.
func (e *Executor) ForSession(s config.WebSession) *Executor {
	return &Executor{cfg: e.cfg, log: e.log.With("account", s.Account), Timings: e.Timings, HoldScale: e.HoldScale,
		ProbeTimeout: e.ProbeTimeout, profile: s.Profile, closeGrace: e.closeGrace}
}

// errOverlap is returned when Execute is entered while an attempt runs.
var errOverlap = errors.New("web executor is already running a task (the web lane runs one at a time)")

// Execute runs one attempt of job. Failures are *attempt.TaskError: account
// (signed out), environment (profile in use, no browser), transient (page
// error, browser died, web.taskTimeout passed: that one wraps
// attempt.ErrTimeout), permanent (site config that matches nothing). When
// ctx ends it closes the browser and returns an error wrapping
// context.Cause(ctx).
func (e *Executor) Execute(ctx context.Context, job *attempt.Job) (attempt.Result, error) {
	if !e.mu.TryLock() {
		return attempt.Result{}, &attempt.TaskError{Class: taskfile.ClassTransient, Err: errOverlap}
	}
	defer e.mu.Unlock()
	if c := e.closing; c != nil {
		select {
		case <-c:
		case <-ctx.Done():
			return attempt.Result{}, stopped(ctx, "waiting for the last browser to close")
		}
		e.closing = nil
	}
	started := time.Now()
	log := job.Log
	model := job.Model
	site, ok := e.cfg.Sites[model.Site]
	if !ok {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "model %s: site %q is not in the config", model.Name, model.Site)
	}
	profile := e.profile
	if err := ensureProfile(profile); err != nil {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassEnvironment, "%w", err)
	}

	b, err := e.browserFor(ctx, job, profile, log)
	if err != nil {
		return attempt.Result{}, err
	}
	job.SetBrowserPID(b.PID())
	probeTimeout := e.ProbeTimeout
	if probeTimeout <= 0 {
		probeTimeout = defaultProbeTimeout
	}
	job.SetProbe(func(pctx context.Context) error { return b.Probe(pctx, probeTimeout) })
	closeLater := false
	defer func() {
		job.SetProbe(nil)
		switch {
		case closeLater && e.warmOn():
			e.keepWarm(b)
			return
		case closeLater:
			e.closeLater(b)
			return
		}
		job.SetStage("closing browser")
		b.Close()
	}()

	// The page work runs under the tab's context (it ends if the browser
	// dies), the total limit web.taskTimeout counted from the start of the
	// attempt, and the task's own context.
	errTaskTimeout := fmt.Errorf("%w: web.taskTimeout %s passed", attempt.ErrTimeout, e.cfg.Web.TaskTimeout.D())
	dctx, dcancel := context.WithDeadlineCause(b.Context(), started.Add(e.cfg.Web.TaskTimeout.D()), errTaskTimeout)
	defer dcancel()
	stop := context.AfterFunc(ctx, func() { dcancel() })
	defer stop()

	d := newDriver(site, model.Site, e.Timings, log)
	d.beat, d.stage, d.began = job.Beat, job.SetStage, started
	acct := job.Task.Account
	if acct == "" {
		acct = job.Session.Account
	}
	d.send = sender{record: job.RecordSend, account: acct, attempt: job.Task.Attempt}
	if e.HoldScale > 0 {
		d.holdScale = e.HoldScale
	}
	ans, err := d.chat(dctx, model, job.Task)
	var arts []taskfile.Artifact
	if err == nil { // the answer's images and files, through the page's session (browser/generated)
		job.SetStage("keeping generated files")
		pol := artifacts.Policy{From: site.ArtifactsFrom, Types: e.cfg.Artifacts.ArtifactTypes(), Avoid: taskAddresses(job.Task)}
		ans.Text, arts, err = generated.Keep(dctx, job, generated.Spec{Prelude: helpers, Answer: site.Answer, Extra: site.Artifacts, Limits: artifacts.Limits{MaxFile: e.cfg.Artifacts.MaxFile(), MaxTask: e.cfg.Artifacts.MaxTask()}, Optional: e.cfg.Artifacts.Optional, Policy: pol, Log: log}, ans.Text)
	}
	stage := job.Stage()
	switch {
	case err == nil:
		log.Info("driver: answer received", "chars", utf8.RuneCountInString(ans.Text), "method", ans.Method, "format", ans.Format, "took", time.Since(started).Round(time.Millisecond))
		closeLater = true // the answer is written first; the browser closes meanwhile, or stays warm
		return attempt.Result{Text: ans.Text, Format: ans.Format, Method: ans.Method, Check: ans.Check.State, CheckDiff: ans.Check.Diff, Fallback: ans.fellBack(), Reasoning: ans.Reasoning, Modes: d.modes, Artifacts: arts}, nil
	case ctx.Err() != nil:
		b.Close() // close before returning, as promised; the defer is then a no-op
		return attempt.Result{}, stopped(ctx, stage)
	case b.Context().Err() != nil || b.exited():
		return attempt.Result{}, &attempt.TaskError{Class: taskfile.ClassTransient, Err: fmt.Errorf("%w (pid %d) while %s: %v", errBrowserGone, b.PID(), stage, err)}
	}
	// Something to look at: what the page showed when the attempt failed.
	job.SetStage("saving the page of the failed attempt")
	saved := saveArtefacts(b.Context(), job, job.Task.TaskID, max(job.Task.Attempt, 1), e.cfg.KnownSecrets(os.Getenv), log)
	if errors.Is(context.Cause(dctx), attempt.ErrTimeout) {
		err = &attempt.TaskError{Class: taskfile.ClassTransient, Err: fmt.Errorf("%w, while %s", errTaskTimeout, stage)}
	}
	var te *attempt.TaskError
	if !errors.As(err, &te) {
		te = &attempt.TaskError{Class: taskfile.ClassTransient, Err: fmt.Errorf("while %s: %w", stage, err)}
	}
	if s := saved.String(); s != "" {
		te.Err = fmt.Errorf("%w (%s)", te.Err, s)
	}
	if te.Hold != nil && te.Hold.Screenshot == "" {
		te.Hold.Screenshot = saved.png // the page the operator must see to clear the hold
	}
	return attempt.Result{Modes: d.modes}, te
}

// stopped is the error for an attempt whose context ended: it wraps the
// cause, which the lane reads to pick the final state.
func stopped(ctx context.Context, stage string) error {
	return fmt.Errorf("web task stopped while %s: %w", stage, context.Cause(ctx))
}

// closes counts the browser closes still running after their attempt.
var closes sync.WaitGroup

// WaitClosed waits for every browser close still running after its
// attempt's result went back (a daemon calls it once its lanes stopped, so
// no browser outlives it).
func WaitClosed() { closes.Wait() }

// taskAddresses are the addresses the task's own text names (issue 49):
// its prompt and content (a table's template values are in it), its
// attachments' names. None is ever fetched with the account's session.
func taskAddresses(t *taskfile.Task) *artifacts.Addresses {
	texts := []string{t.Prompt, t.Content}
	texts = append(texts, t.Attachments...)
	for _, a := range t.AttachmentsChecked {
		texts = append(texts, a.Name)
	}
	return artifacts.TextAddresses(texts...)
}

// wentTranscript reports whether an earlier attempt of follow-up th sent
// its transcript to a new chat (its chat was gone): its send went to
// another conversation than th's, so a reattach looks for that text.
func wentTranscript(th *taskfile.Thread, prev *taskfile.SendRecord) bool {
	return prev != nil && prev.Conversation != "" && !sameConversation(prev.Conversation, th.Conversation)
}

// openThread opens the chat a follow-up continues, ready for the next
// message, or says why it is gone: another account's (no longer in the
// config), not one of the site's, not opening, the site's notFound, or
// showing none of its answers within the input grace.
func (d *driver) openThread(ctx context.Context, th *taskfile.Thread) (gone string, err error) {
	switch {
	case th.Account != d.send.account:
		return fmt.Sprintf("it is account %s's chat, and this attempt runs on %s (is %s still in the config?)", th.Account, d.send.account, th.Account), nil
	case th.Conversation == "":
		return "its parent recorded no conversation", nil
	}
	if why := d.foreignConversation(th.Conversation); why != "" {
		return "the recorded conversation is not one of the site's (" + why + "): not opened", nil
	}
	d.stage("opening the chat to continue")
	st, err := d.openURL(ctx, th.Conversation)
	if err != nil {
		if ctx.Err() != nil || attempt.Classify(err) == taskfile.ClassAccount {
			return "", err
		}
		return "it no longer opens: " + err.Error(), nil
	}
	if msg := d.limitMsg(st, ""); msg != "" {
		return "", d.limitErr(msg)
	}
	for deadline := time.Now().Add(d.t.InputGrace); ; {
		cs, err := d.lookConv(ctx, "")
		switch {
		case err != nil:
			return "", d.fail(ctx, "read the conversation: %w", err)
		case cs.LoggedOut:
			return "", d.signedOut()
		case cs.NotFound:
			return "the site shows notFound", nil
		case !sameConversation(cs.Href, th.Conversation):
			return "the page went to " + cs.Href, nil
		case cs.Answers > 0 && !cs.Busy:
			d.step("chat opened to continue", "conversation", th.Conversation, "answers", cs.Answers)
			return "", nil
		case time.Now().After(deadline):
			return "it shows none of its answers", nil
		}
		select {
		case <-ctx.Done():
			return "", d.fail(ctx, "read the conversation: %w", context.Cause(ctx))
		case <-time.After(d.t.Poll):
		}
	}
}

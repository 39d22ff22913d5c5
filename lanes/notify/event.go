// Package notify tells people and programs what happened in the spool:
// a batch finished, a task failed for good, an account was held, released
// or logged out, the web lane went to standby. Each event goes as JSON to a
// command (on stdin) and/or a webhook (POST), from a bounded queue served
// by its own worker, so a slow or failing receiver never holds up a lane;
// failed deliveries are logged and retried with backoff. Nothing here
// touches a task's state.
package notify

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// SchemaVersion is the `version` field of every event. Fields are only
// ever added; renaming or removing one bumps it.
const SchemaVersion = 1

// Event is what a receiver gets, as JSON. Which fields are set depends on
// the event: see docs/operators.md, "Notifications".
type Event struct {
	Version int       `json:"version"`
	Event   string    `json:"event"` // one of config.Events
	ID      string    `json:"id"`    // unique per event; a resend carries the same id
	At      time.Time `json:"at"`
	Host    string    `json:"host"` // the daemon's host (config `host`)
	Spool   string    `json:"spool"`
	Test    bool      `json:"test,omitempty"` // sent by `spoolgate notify test`

	Lane       string `json:"lane,omitempty"`
	Batch      string `json:"batch,omitempty"`
	TaskID     string `json:"taskId,omitempty"`
	Model      string `json:"model,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	ErrorClass string `json:"errorClass,omitempty"`
	Error      string `json:"error,omitempty"`

	// batch.finished
	Counts           *Counts    `json:"counts,omitempty"`
	Failed           []string   `json:"failed,omitempty"`     // failed taskIds, oldest first, at most MaxFailedIDs
	FailedMore       int        `json:"failedMore,omitempty"` // failed taskIds left out of Failed
	FirstSubmittedAt *time.Time `json:"firstSubmittedAt,omitempty"`
	LastFinishedAt   *time.Time `json:"lastFinishedAt,omitempty"`

	// account.* and lane.standby
	Account string     `json:"account,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
	Holder  string     `json:"holder,omitempty"`
	// account.loggedOut and account.challenge of a held account: the page
	// that held it, relative to the spool, and its link on the status
	// page (absolute when the config's http: names a reachable address).
	Screenshot    string `json:"screenshot,omitempty"`
	ScreenshotURL string `json:"screenshotUrl,omitempty"`
}

// Counts are a finished batch's tasks by final state.
type Counts struct {
	Success  int `json:"success"`
	Failed   int `json:"failed"`
	Canceled int `json:"canceled"`
	Total    int `json:"total"`
}

// MaxFailedIDs caps the failed ids one batch.finished carries.
const MaxFailedIDs = 1000

// newEvent fills the common fields; the id is random unless given.
func newEvent(cfg *config.Config, name string, at time.Time) Event {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return Event{Version: SchemaVersion, Event: name, ID: name + ":" + hex.EncodeToString(b[:]), At: at.UTC(),
		Host: cfg.Host, Spool: spool.NewLayout(cfg.Spool).Root}
}

// TaskFailed is the event of a task that failed for good.
func TaskFailed(cfg *config.Config, k taskfile.Kind, t *taskfile.Task) Event {
	e := newEvent(cfg, config.EventTaskFailed, time.Now())
	e.Lane, e.Batch, e.TaskID, e.Model, e.Attempt = string(k), t.Batch, t.TaskID, t.Model, t.Attempt
	e.ErrorClass, e.Error = string(t.ErrorClass), t.Error
	return e
}

// AccountLoggedOut is the event of a web task that found its account
// signed out.
func AccountLoggedOut(cfg *config.Config, account string, t *taskfile.Task) Event {
	e := newEvent(cfg, config.EventAccountLoggedOut, time.Now())
	e.Lane, e.Account, e.TaskID, e.Model, e.Batch, e.Reason = string(taskfile.KindWeb), account, t.TaskID, t.Model, t.Batch, t.Error
	return e
}

// AccountSignInHeld is the event of an account that a signed-out page
// (account.loggedOut) or a challenge (account.challenge) holds until an
// operator signs in or releases it: once per hold, with the page's
// screenshot and its link.
func AccountSignInHeld(cfg *config.Config, account string, h Hold) Event {
	name := config.EventAccountLoggedOut
	if h.Kind == taskfile.HoldChallenge {
		name = config.EventAccountChallenge
	}
	e := newEvent(cfg, name, time.Now())
	e.Lane, e.Account, e.Reason, e.TaskID = string(taskfile.KindWeb), account, h.Reason, h.Task
	e.Screenshot = h.Screenshot
	if href := taskfile.ShotHref(h.Screenshot); href != "" {
		e.ScreenshotURL = consoleBase(cfg) + href
	}
	return e
}

// consoleBase is the status page's origin for links in events, "" (links
// relative to the page) when the config serves no page.
func consoleBase(cfg *config.Config) string {
	if cfg.HTTP == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(cfg.HTTP)
	if err != nil {
		return ""
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = cfg.Host
	}
	scheme := "http"
	if cfg.Console.TLSOn() {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// AccountHeld is the event of an account whose tasks now wait; until is
// when the hold ends by itself (zero: when someone ends it).
func AccountHeld(cfg *config.Config, account, reason string, until time.Time) Event {
	e := newEvent(cfg, config.EventAccountHeld, time.Now())
	e.Lane, e.Account, e.Reason = string(taskfile.KindWeb), account, reason
	if !until.IsZero() {
		u := until.UTC()
		e.Until = &u
	}
	return e
}

// AccountReleased is the event of a held account that runs tasks again.
func AccountReleased(cfg *config.Config, account, reason string) Event {
	e := newEvent(cfg, config.EventAccountReleased, time.Now())
	e.Lane, e.Account, e.Reason = string(taskfile.KindWeb), account, reason
	return e
}

// LaneStandby is the event of a lane that waits for another process: the
// web lane of a second daemon behind the web runner lock.
func LaneStandby(cfg *config.Config, k taskfile.Kind, holder string) Event {
	e := newEvent(cfg, config.EventLaneStandby, time.Now())
	e.Lane, e.Holder = string(k), holder
	e.Reason = "another process holds the web runner lock"
	return e
}

// BatchFinished is the event of a batch whose tasks are all final. Its id
// names the batch's completion (the batch and its last finish), so every
// daemon that sees the same completion builds the same id.
func BatchFinished(cfg *config.Config, t *spool.BatchTally, key string, at time.Time) Event {
	e := newEvent(cfg, config.EventBatchFinished, at)
	e.ID = config.EventBatchFinished + ":" + key
	e.Batch = t.Batch
	e.Counts = &Counts{Success: t.Success, Failed: t.Failed, Canceled: t.Canceled, Total: t.Total()}
	ids := t.FailedIDs
	if len(ids) > MaxFailedIDs {
		e.FailedMore = len(ids) - MaxFailedIDs
		ids = ids[:MaxFailedIDs]
	}
	e.Failed = append([]string{}, ids...)
	if !t.FirstSubmittedAt.IsZero() {
		f := t.FirstSubmittedAt.UTC()
		e.FirstSubmittedAt = &f
	}
	l := t.LastFinishedAt.UTC()
	e.LastFinishedAt = &l
	return e
}

// Sample is the event `spoolgate notify test` sends: a batch.finished
// (or the named event) marked test: true.
func Sample(cfg *config.Config, name string) Event {
	now := time.Now().UTC()
	var e Event
	switch name {
	case config.EventTaskFailed:
		e = TaskFailed(cfg, taskfile.KindAPI, &taskfile.Task{TaskID: "sample-task", Model: "sample-model", Batch: "sample-batch", Attempt: 3,
			ErrorClass: taskfile.ClassTransient, Error: "sample: HTTP 503: service unavailable"})
	case config.EventAccountHeld:
		e = AccountHeld(cfg, "sample-account", "sample: usage limit reached", now.Add(time.Hour))
	case config.EventAccountReleased:
		e = AccountReleased(cfg, "sample-account", "sample: hold ended")
	case config.EventAccountLoggedOut:
		e = AccountLoggedOut(cfg, "sample-account", &taskfile.Task{TaskID: "sample-task", Model: "sample-web-model",
			Error: "site sample shows its signed-out page"})
	case config.EventAccountChallenge:
		e = AccountSignInHeld(cfg, "sample-account", Hold{Kind: taskfile.HoldChallenge, Reason: "sample: Cloudflare challenge",
			Task: "sample-task", Screenshot: "web/logs/sample-task.1.png"})
	case config.EventLaneStandby:
		e = LaneStandby(cfg, taskfile.KindWeb, "pid 4242 on sample-host")
	default:
		t := &spool.BatchTally{Batch: "sample-batch", Success: 38, Failed: 2, FailedIDs: []string{"sample-7", "sample-31"},
			FirstSubmittedAt: now.Add(-40 * time.Minute), LastFinishedAt: now}
		e = BatchFinished(cfg, t, "sample", now)
		e.ID = config.EventBatchFinished + ":sample:" + newEvent(cfg, "", now).ID[1:]
	}
	e.Test = true
	return e
}

// Package actions is what an operator can do to a spool (submit, cancel,
// retry, change a priority, pause and resume a lane, end an account's
// hold), one code path for the command line and the console's buttons.
package actions

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Refused is an action refused for what was asked (a task in the wrong
// state, an invalid field): the operator's to fix, not a fault. The
// command line exits 2 on one; the console shows Msg next to its field.
type Refused struct {
	Field string // the form field at fault, "" for none
	Msg   string
}

func (e *Refused) Error() string { return e.Msg }

func refusedf(field, format string, args ...any) error {
	return &Refused{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Ref is one task: its lane, id and the folder it is in ("" when none).
type Ref struct {
	Lane taskfile.Kind
	ID   string
	Dir  string
}

func (r Ref) String() string {
	if r.Lane == "" {
		return r.ID
	}
	return string(r.Lane) + "/" + r.ID
}

// Locate finds lane k's task id.
func Locate(st *spool.Store, k taskfile.Kind, id string) Ref {
	return Ref{Lane: k, ID: id, Dir: st.Layout.Locate(k, id)}
}

// CancelOutcome is what Cancel did.
type CancelOutcome int

const (
	CancelRequested CancelOutcome = iota // pending or running: a request left in <lane>/cancel/
	CancelNotFound                       // no such task
	CancelFinished                       // already done, failed or canceled
)

// Cancel leaves a cancel request for a pending or running task; the
// daemon that holds it acts on it (pending at once, running at its next
// checkpoint).
func Cancel(st *spool.Store, r Ref) (CancelOutcome, error) {
	switch r.Dir {
	case "":
		return CancelNotFound, nil
	case taskfile.DirPending, taskfile.DirRunning:
		if err := st.RequestCancel(r.Lane, r.ID); err != nil {
			return 0, fmt.Errorf("cancel %s: %w", r, err)
		}
		return CancelRequested, nil
	}
	return CancelFinished, nil
}

// CheckRetry says why r cannot be retried (a *Refused), or nil.
func CheckRetry(st *spool.Store, r Ref) error {
	if !taskfile.ValidTaskID(r.ID) {
		return refusedf("", "retry: %s/%s: not a taskId (%s): refused", r.Lane, r.ID, taskfile.TaskIDProblem(r.ID))
	}
	if r.Dir == "" {
		return refusedf("", "retry: %s: no such task", r)
	}
	var re *spool.RetryError
	if _, err := st.Retryable(r.Lane, r.ID); errors.As(err, &re) {
		if re.Rejected {
			return refusedf("", "retry: %s is a rejected drop (see %s.error): fix it and drop it again", r, r)
		}
		if re.State == "" {
			return refusedf("", "retry: %s: no such task (its file is not named after its taskId)", r)
		}
		return refusedf("", "retry: %s is %s: only failed or canceled tasks can be retried", r, re.State)
	}
	return nil
}

// Retry moves one failed or canceled task back to its lane's incoming/:
// intake runs it as new under the same taskId.
func Retry(st *spool.Store, r Ref) error {
	if _, err := st.Retry(r.Lane, r.ID); err != nil {
		return fmt.Errorf("retry %s: %w", r, err)
	}
	return nil
}

// FailedOfBatch lists the failed tasks of batch in both lanes (rejected
// drops are not tasks), those of class only when class is not "".
func FailedOfBatch(cfg *config.Config, batch string, class taskfile.ErrorClass) ([]Ref, error) {
	rows, err := report.ReadResults(cfg, batch, false) // archived tasks are not retried
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, row := range rows {
		if row.State != string(taskfile.StateFailed) || (class != "" && row.ErrorClass != string(class)) {
			continue
		}
		refs = append(refs, Ref{Lane: row.Lane, ID: row.TaskID, Dir: taskfile.DirFailed})
	}
	return refs, nil
}

// ErrNotPending: a priority change of a task that is not (or no longer)
// pending.
var ErrNotPending = errors.New("only a pending task can change its priority")

// SetPriority rewrites a pending task's priority and leaves
// <lane>/priority/ID, by which every daemon reorders its queue.
func SetPriority(st *spool.Store, r Ref, level taskfile.Priority) error {
	if level == "" || !level.Valid() {
		return refusedf("priority", "priority: %q is not high, normal or low", level)
	}
	switch r.Dir {
	case taskfile.DirPending:
	case "":
		return refusedf("", "priority: %s: no such task in %s", r, st.Layout.Root)
	default:
		return fmt.Errorf("priority: %s is %s: %w", r, taskfile.FolderState[r.Dir], ErrNotPending)
	}
	if _, err := st.SetPriority(r.Lane, r.ID, level); err != nil {
		if errors.Is(err, spool.ErrNotPending) {
			return fmt.Errorf("priority: %s started meanwhile: %w", r, ErrNotPending)
		}
		return fmt.Errorf("priority %s: %w", r, err)
	}
	if err := st.RequestReindex(r.Lane, r.ID); err != nil {
		return fmt.Errorf("priority %s: %w", r, err)
	}
	return nil
}

// ValidHost reports whether host can name a per-host pause switch.
func ValidHost(host string) bool {
	return host == "" || !(strings.ContainsAny(host, "/\\: \t\n") || strings.HasPrefix(host, ".") || len(host) > 128)
}

// PauseFile is lane k's pause switch: <lane>/paused, or <lane>/paused.HOST
// for one host only.
func PauseFile(st *spool.Store, k taskfile.Kind, host string) (string, error) {
	if !k.Valid() {
		return "", refusedf("lane", "give one lane: web or api")
	}
	if !ValidHost(host) {
		return "", refusedf("host", "%q is not a host name", host)
	}
	if err := st.Layout.Create(); err != nil {
		return "", err
	}
	file := st.Layout.Paused(k)
	if host != "" {
		file += "." + host
	}
	return file, nil
}

// Pause writes the switch file: the lane claims nothing new; running work
// finishes. by names who paused ("paused by BY at TIME").
func Pause(st *spool.Store, file, by string, now time.Time) error {
	note := fmt.Sprintf("paused by %s at %s\n", by, now.UTC().Format(time.RFC3339))
	return st.WriteFileAtomic(file, []byte(note))
}

// Resume records the pause in the lane's pauses.log (for the timeline)
// and removes the switch file. A pause not recorded is returned as
// notRecorded, the resume done all the same.
func Resume(file string, now time.Time) (notRecorded, err error) {
	notRecorded = spool.RecordResume(file, now)
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return notRecorded, err
	}
	return notRecorded, nil
}

// ReleaseOutcome is what ReleaseAccount found.
type ReleaseOutcome int

const (
	ReleaseNotHeld ReleaseOutcome = iota // no hold
	ReleaseEnded                         // an active hold ended by hand
	ReleaseRemoved                       // an expired hold's file removed
	ReleaseForeign                       // the hold file is foreign: left in place, holds nothing
)

// ReleaseAccount ends the usage-limit hold on account, so its tasks are
// tried at the next round of any daemon on the spool.
func ReleaseAccount(st *spool.Store, account string, now time.Time) (ReleaseOutcome, taskfile.Hold, error) {
	if !taskfile.ValidAccount(account) {
		return 0, taskfile.Hold{}, refusedf("account", "%q is not an account name", account)
	}
	h, held := st.AccountHold(account)
	was, err := st.ReleaseAccount(account)
	var fe *spool.ForeignError
	switch {
	case errors.As(err, &fe):
		return ReleaseForeign, h, nil
	case err != nil:
		return 0, h, fmt.Errorf("resume --account %s: %w", account, err)
	case !was:
		return ReleaseNotHeld, h, nil
	case held && h.Active(now):
		return ReleaseEnded, h, nil
	}
	return ReleaseRemoved, h, nil
}

// PauseAccount holds account until an operator resumes it (`spoolgate
// resume --account`, the console's release): its tasks wait in pending,
// spending no attempt, on every host of the spool; a task it runs now
// ends first. by names who paused it. An account the config has no web
// session of, or one already held, is refused.
func PauseAccount(st *spool.Store, account, by string, now time.Time) error {
	if !taskfile.ValidAccount(account) {
		return refusedf("account", "%q is not an account name", account)
	}
	known := false
	for _, s := range st.Cfg.WebSessions() {
		known = known || s.Account == account
	}
	if !known {
		return refusedf("account", "%q is not an account of the config's web sessions", account)
	}
	if h, ok := st.AccountHold(account); ok && h.Active(now) {
		return refusedf("account", "account %s is %s already", account, h.What())
	}
	return st.HoldAccount(taskfile.Hold{Account: account, Kind: taskfile.HoldPaused, Reason: "paused by " + by, Since: now, By: by})
}

// NewTaskID makes an id for a task built from flags, stdin or a form.
func NewTaskID(prefix string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%s-%s", IDPrefix(prefix, "task"), time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(b[:]))
}

// IDPrefix is s made fit to start a taskId: letters, digits, - and _
// kept, everything else -, at most 80 bytes; def when nothing is left.
func IDPrefix(s, def string) string {
	p := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, s)
	if p == "" || !taskfile.ValidTaskID(p) {
		p = def
	}
	if len(p) > 80 {
		p = p[:80]
	}
	return p
}

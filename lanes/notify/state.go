package notify

import (
	"context"
	"sort"
	"time"

	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Hold is why an account's tasks wait, and until when (zero: until someone
// ends it).
type Hold struct {
	Reason string
	Until  time.Time
	// Kind, Task and Screenshot are a signed-out or challenge hold's
	// (taskfile.Hold): it is told as account.loggedOut or
	// account.challenge, with the page's screenshot.
	Kind       string
	Task       string
	Screenshot string
}

// StateWatch turns states that the daemon only shows (its web lane in
// standby, an account held) into events when they change. A lane that
// starts in standby is told; accounts already held when this daemon starts
// (or takes the web lane over) are not, so a restart repeats nothing.
type StateWatch struct {
	Notifier *Notifier
	Cfg      *config.Config
	// Every is the polling period (default 1 s).
	Every time.Duration
	// Standby reports whether this daemon's web lane waits for another
	// process, and who that is. Nil: the daemon has no web lane.
	Standby func() (standby bool, holder string)
	// Holds reports the held accounts. ok false means this daemon does
	// not run the web lane now (in standby): the one that does reports.
	Holds func() (held map[string]Hold, ok bool)

	startstop.Base

	standby bool
	holds   map[string]Hold // nil: no baseline yet
}

// Start polls until Stop. Safe to call twice.
func (w *StateWatch) Start(ctx context.Context) error {
	if w.Every <= 0 {
		w.Every = time.Second
	}
	ctx, ok, started, stopped := w.StartInit(ctx)
	if !ok {
		return nil
	}
	go func() {
		defer stopped()
		started()
		poll(ctx, w.Every, nil, 0, w.poll)
	}()
	return nil
}

// poll compares the states with the last poll and sends what changed.
func (w *StateWatch) poll() {
	if w.Standby != nil {
		sb, holder := w.Standby()
		if sb && !w.standby {
			w.Notifier.Notify(LaneStandby(w.Cfg, taskfile.KindWeb, holder))
		}
		w.standby = sb
	}
	if w.Holds == nil {
		return
	}
	held, ok := w.Holds()
	if !ok {
		w.holds = nil
		return
	}
	if w.holds != nil {
		for _, a := range sortedKeys(held) {
			if _, was := w.holds[a]; !was {
				if h := held[a]; h.Kind == taskfile.HoldPaused {
					continue // an operator paused it: nothing to tell them
				} else if h.Kind == taskfile.HoldSignedOut || h.Kind == taskfile.HoldChallenge {
					w.Notifier.Notify(AccountSignInHeld(w.Cfg, a, h))
					continue
				}
				w.Notifier.Notify(AccountHeld(w.Cfg, a, held[a].Reason, held[a].Until))
			}
		}
		for _, a := range sortedKeys(w.holds) {
			if _, is := held[a]; !is {
				w.Notifier.Notify(AccountReleased(w.Cfg, a, "no longer held: "+w.holds[a].Reason))
			}
		}
	}
	if held == nil {
		held = map[string]Hold{}
	}
	w.holds = held
}

func sortedKeys(m map[string]Hold) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

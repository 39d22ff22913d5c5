package cli

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/notify"
	"github.com/spoolgate/spoolgate/lanes/retention"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// dailyOps are the daemon's components beside the lanes: notifications
// (the notifier, the batch watch, the state watch) and retention (the
// archiver). Each is off unless the config asks for it.
type dailyOps struct {
	cfg   *config.Config
	store *spool.Store
	log   *slog.Logger
	n     *notify.Notifier
	batch *notify.BatchWatch
	state *notify.StateWatch
	arch  *retention.Archiver
}

func newDailyOps(cfg *config.Config, store *spool.Store, log *slog.Logger) *dailyOps {
	o := &dailyOps{cfg: cfg, store: store, log: log, n: notify.New(cfg, log),
		arch: &retention.Archiver{Store: store, Log: log.With("component", "retention")}}
	if o.n.Wants(config.EventBatchFinished) {
		o.batch = &notify.BatchWatch{Store: store, Notifier: o.n, Log: log}
	}
	return o
}

// hooks are what the lanes tell the daily operations.
func (o *dailyOps) hooks() lanes.Hooks {
	if o.n == nil {
		return lanes.Hooks{}
	}
	return lanes.Hooks{OnFinal: o.taskEnded}
}

func (o *dailyOps) taskEnded(k taskfile.Kind, t *taskfile.Task) {
	if !t.State.Final() {
		return
	}
	if t.Batch != "" && o.batch != nil {
		o.batch.Kick()
	}
	if t.State != taskfile.StateFailed {
		return
	}
	o.n.Notify(notify.TaskFailed(o.cfg, k, t))
	if k == taskfile.KindWeb && t.ErrorClass == taskfile.ClassAccount {
		account := ""
		if m, ok := o.cfg.Model(t.Model); ok {
			account = m.Account
		}
		o.n.Notify(notify.AccountLoggedOut(o.cfg, account, t))
	}
}

// start runs the components; info is the running daemon's view of its
// lanes.
func (o *dailyOps) start(ctx context.Context, info func() []taskfile.LaneInfo) {
	o.arch.Start(ctx)
	if o.n == nil {
		return
	}
	o.n.Start(ctx)
	if o.batch != nil {
		o.batch.Start(ctx)
	}
	web := func() (taskfile.LaneInfo, bool) {
		for _, li := range info() {
			if li.Kind == taskfile.KindWeb {
				return li, true
			}
		}
		return taskfile.LaneInfo{}, false
	}
	if _, ok := web(); !ok {
		return // no web lane: no standby, no account holds to tell
	}
	o.state = &notify.StateWatch{Notifier: o.n, Cfg: o.cfg,
		Standby: func() (bool, string) { li, _ := web(); return li.Standby, li.Holder },
		Holds: func() (map[string]notify.Hold, bool) {
			if li, _ := web(); li.Standby {
				return nil, false
			}
			return o.accountHolds(), true
		}}
	o.state.Start(ctx)
}

// accountHolds lists the web accounts (of web models and of accounts:)
// that are switched off or held by a usage limit (<spool>/accounts/NAME.held).
func (o *dailyOps) accountHolds() map[string]notify.Hold {
	names := map[string]bool{}
	for i := range o.cfg.Models {
		if m := &o.cfg.Models[i]; m.Kind == taskfile.KindWeb {
			for _, a := range m.Pinned() {
				names[a] = true
			}
		}
	}
	for a := range o.cfg.Accounts {
		names[a] = true
	}
	out := map[string]notify.Hold{}
	now := time.Now()
	for a := range names {
		if !o.store.AccountDisabled(a) {
			if h, ok := o.store.AccountHold(a); ok && h.Active(now) {
				out[a] = notify.Hold{Reason: "usage limit: " + h.Reason, Until: h.Until}
				if h.SignIn() {
					out[a] = notify.Hold{Reason: h.What() + ": " + h.Reason, Kind: h.Kind, Task: h.Task, Screenshot: h.Screenshot}
				}
			}
			continue
		}
		reason := "disabled in the config"
		if ac, ok := o.cfg.Accounts[a]; !ok || !ac.Disabled {
			reason = "disabled by " + filepath.Join(o.store.Layout.Accounts(), a+".disabled")
		}
		out[a] = notify.Hold{Reason: reason}
	}
	return out
}

// stop ends the components after the lanes have stopped: the batch watch
// takes a last look, the notifier sends what is queued.
func (o *dailyOps) stop() {
	o.arch.Stop()
	if o.state != nil {
		o.state.Stop()
	}
	if o.batch != nil {
		o.batch.Stop()
	}
	o.n.Stop()
}

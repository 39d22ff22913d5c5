package lanes

import (
	"cmp"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// An account's pace (config.Pace) is kept at the claim: a session whose
// account may not send yet leaves its next task pending (nothing spent)
// and idles until the pace lets it, while the other sessions run. The
// sends are counted in the account's sealed pace record in the spool
// (spool.Store.RecordPaceSend), so a restarted daemon and every host of a
// shared spool count the same sends. A claim that waited for the pace
// still sends after its own launch and page load: the gap between two
// sends is never shorter than the pace's.

// paceOf returns the session's pace, scaled (Config.PaceScale), or nil.
func (l *Lane) paceOf(account, site string) *config.Pace {
	p := l.cfg().PaceOf(account, site)
	if p == nil {
		return nil
	}
	sp := p.Scaled(l.c.PaceScale)
	return &sp
}

// sessionPaced reports when the session's account may next send (zero:
// now) and which rule binds; a paced session writes that into the pace
// record for status (once per change) and idles.
func (l *Lane) sessionPaced(s *session, now time.Time) time.Time {
	p := l.paceOf(s.spec.Account, s.spec.Site)
	if p == nil {
		return time.Time{}
	}
	rec, _ := l.c.Store.PaceRecord(s.spec.Account)
	until, by := p.Until(rec.Sends, rec.Next, now)
	if until.IsZero() {
		return time.Time{}
	}
	if err := l.c.Store.MarkPaced(s.spec.Account, until, by); err != nil {
		l.c.Store.Limiter().Fail("pace:"+s.spec.Account, "pace record", err, "account", s.spec.Account)
	}
	s.mu.Lock()
	changed := !s.pacedUntil.Equal(until)
	s.pacedUntil, s.pacedBy = until, by
	s.mu.Unlock()
	if changed {
		l.c.Log.Info("account paced: its next task waits", "account", s.spec.Account, "until", until.Format(time.RFC3339Nano), "by", by)
	}
	l.sessionIdle(s, "", now)
	return until
}

// recordPaceSend counts a send of the runner's session account in its
// pace record: at its sending record (before the click: a send that
// fails after it still counts), then moved to when the page showed it
// sent, for the gap and the caps count from the send's later bound. A
// record that cannot be written is logged: the send goes on (the task
// was claimed within the pace).
func (r *runner) recordPaceSend(rec *taskfile.SendRecord) {
	if r.sess == nil || rec == nil {
		return
	}
	acct := r.sess.spec.Account
	p := r.l.paceOf(acct, r.sess.spec.Site)
	if p == nil {
		return
	}
	var err error
	switch {
	case rec.State == taskfile.SendSending:
		err = r.l.c.Store.RecordPaceSend(acct, cmp.Or(rec.SendingAt, time.Now()), *p)
		r.sess.mu.Lock()
		r.sess.pacedUntil, r.sess.pacedBy = time.Time{}, ""
		r.sess.mu.Unlock()
	case rec.State == taskfile.SendSent && !rec.SendingAt.IsZero() && !rec.SentAt.IsZero():
		err = r.l.c.Store.PaceSent(acct, rec.SendingAt, rec.SentAt)
	}
	if err != nil {
		r.log.Error("cannot record the send in the account's pace record", "account", acct, "err", err)
	}
}

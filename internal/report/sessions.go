package report

import (
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoolgate/spoolgate/spool/status"
)

// writeSessions lists the web lane's sessions, one line each.
func writeSessions(w io.Writer, now time.Time, ln status.Lane) {
	if len(ln.Sessions) == 0 {
		return
	}
	rows := make([][]string, 0, len(ln.Sessions))
	for _, s := range ln.Sessions {
		lease := "lease free"
		switch {
		case s.BlockedBy != "":
			lease = "lease blocked by foreign file " + s.BlockedBy
		case s.Lease != "":
			lease = "lease " + s.Lease
		}
		rows = append(rows, []string{"session " + s.Account, s.Site, sessionStateText(now, s), lease,
			fmt.Sprintf("finished %d  failed %d", s.Finished, s.Failed)})
	}
	writeColumns(w, "  ", rows)
}

// sessionStateText is a session's state in words: "running T1 (heartbeat
// 3s ago)", "held until 15:04", "idle"...
func sessionStateText(now time.Time, s status.Session) string {
	switch s.State {
	case status.SessionRunning:
		return fmt.Sprintf("running %s (heartbeat %s ago)", s.Task, dur(s.HeartbeatAgeSeconds))
	case status.SessionHeld:
		if s.HeldUntil != nil {
			return "held until " + clockText(now, *s.HeldUntil)
		}
	}
	return s.State
}

var (
	descSession = prometheus.NewDesc("spoolgate_web_session",
		"1 for each web session's current state (running, idle, disabled, held, logged out, leased by another host, standby).", []string{"account", "site", "state"}, nil)
	descSessionTasks = prometheus.NewDesc("spoolgate_web_session_tasks",
		"Tasks whose last attempt ran on the account, by final state (success, failed).", []string{"account", "state"}, nil)
)

func collectSessions(g func(d *prometheus.Desc, v float64, labels ...string), ln status.Lane) {
	for _, s := range ln.Sessions {
		g(descSession, 1, s.Account, s.Site, s.State)
		g(descSessionTasks, float64(s.Finished), s.Account, "success")
		g(descSessionTasks, float64(s.Failed), s.Account, "failed")
	}
}

package report

import (
	"fmt"
	"io"
	"time"

	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
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
		rows = append(rows, []string{"session " + s.Account, s.Site, SessionStateText(now, s), lease,
			fmt.Sprintf("finished %d  failed %d", s.Finished, s.Failed)})
	}
	writeColumns(w, "  ", rows)
}

// sessionStateText is a session's state in words: "running T1 (heartbeat
// 3s ago)", "held until 15:04", "idle"...
func SessionStateText(now time.Time, s status.Session) string {
	switch s.State {
	case taskfile.SessionRunning:
		return fmt.Sprintf("running %s (heartbeat %s ago)", s.Task, Dur(s.HeartbeatAgeSeconds))
	case taskfile.SessionHeld:
		if s.HeldUntil != nil {
			return "held until " + clockText(now, *s.HeldUntil)
		}
	case taskfile.SessionSignedOut, taskfile.SessionChallenge:
		if s.Screenshot != "" {
			return s.State + " (screenshot " + s.Screenshot + ")"
		}
	case taskfile.SessionIdle:
		if s.PacedUntil != nil {
			return "paced until " + clockText(now, *s.PacedUntil) + " (" + s.PacedBy + ")"
		}
	}
	return s.State
}

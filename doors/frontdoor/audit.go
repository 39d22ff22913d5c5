package frontdoor

import (
	"net"
	"net/http"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// audit writes an action a token took on a task (cancel, retry) to the
// spool's audit trail, through the code every door uses: the token's name
// is the user, "door" the door. A line not written is logged: the action
// is done.
func (d *Door) audit(r *http.Request, action string, k taskfile.Kind, id string) {
	name := ""
	if tk := tokenOf(r.Context()); tk != nil {
		name = tk.name
	}
	remote := r.RemoteAddr
	if h, _, err := net.SplitHostPort(remote); err == nil {
		remote = h
	}
	if err := d.st.AppendAudit(spool.AuditEntry{Time: time.Now(), User: name, Remote: remote, Door: spool.DoorToken,
		Action: action, Tasks: []string{string(k) + "/" + id}}); err != nil {
		d.log.Error("audit trail: not written", "action", action, "token", name, "err", err)
	}
}

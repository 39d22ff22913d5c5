//go:build unix

package doors

import (
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/spool"
)

// checkAuditDoors fails t unless the rig's audit trail holds, in order,
// sealed and unbroken, exactly the lines want names as DOOR:USER:ACTION
// ("USER@HOST" stands for the command line's user@host).
func checkAuditDoors(t *testing.T, r *rig.Rig, want string) {
	t.Helper()
	es, err := r.Store().Audit(time.Now(), func(spool.AuditEntry) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		switch {
		case e.Break != "":
			got = append(got, "break:"+e.Break)
		case e.Foreign != "":
			got = append(got, "foreign:"+e.Foreign)
		default:
			got = append(got, e.Door+":"+e.User+":"+e.Action)
		}
	}
	if want = strings.ReplaceAll(want, "USER@HOST", cli.UserHost()); strings.Join(got, " ") != want {
		t.Errorf("the audit trail: %q, want %q", strings.Join(got, " "), want)
	}
}

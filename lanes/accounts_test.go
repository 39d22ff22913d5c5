package lanes

import (
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestAccountBlocked: an account's tasks wait while a hold runs, each kind
// named; a paused hold (an operator's) runs, a day later too, until it is
// released.
func TestAccountBlocked(t *testing.T) {
	st := spool.NewStore(fixture.Spool(t), nil)
	now := time.Now()
	for i, tc := range []struct {
		hold *taskfile.Hold
		at   time.Duration // when it is asked, from now
		want string
	}{
		{nil, 0, ""},
		{&taskfile.Hold{Kind: taskfile.HoldPaused, Reason: "paused by ops"}, 24 * time.Hour, "paused"},
		{&taskfile.Hold{Kind: taskfile.HoldSignedOut, Reason: "signed out"}, 0, "signed out"},
		{&taskfile.Hold{Reason: "limit", Until: now.Add(time.Hour)}, 0, "held"},
		{&taskfile.Hold{Reason: "limit over", Until: now.Add(time.Hour)}, 2 * time.Hour, ""},
	} {
		if _, err := st.ReleaseAccount("ops1"); err != nil {
			t.Fatal(err)
		}
		if tc.hold != nil {
			h := *tc.hold
			h.Account, h.Since, h.By = "ops1", now.Add(time.Duration(i-10)*time.Second), "test" // each newer than the last released
			if err := st.HoldAccount(h); err != nil {
				t.Fatal(err)
			}
		}
		if why, _ := accountBlocked(st, "ops1", now.Add(tc.at)); why != tc.want {
			t.Errorf("hold %+v: blocked %q, want %q", tc.hold, why, tc.want)
		}
	}
}

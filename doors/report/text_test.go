package report

import (
	"testing"

	"github.com/spoolgate/spoolgate/spool/status"
)

func TestBar(t *testing.T) {
	for _, c := range []struct {
		p    status.Progress
		want string
	}{
		{status.Progress{}, "[....................] 0/0   0%"},
		{status.Progress{Finished: 12, Total: 40, Percent: 30}, "[######..............] 12/40  30%"},
		{status.Progress{Finished: 40, Total: 40, Percent: 100}, "[####################] 40/40 100%"},
	} {
		if got := Bar(c.p); got != c.want {
			t.Errorf("bar(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

func TestDur(t *testing.T) {
	for sec, want := range map[float64]string{0: "0.0s", 2.04: "2.0s", 12: "12s", 59.4: "59s", 59.6: "1m00s", 125: "2m05s", 3725: "1h02m"} {
		if got := Dur(sec); got != want {
			t.Errorf("dur(%v) = %q, want %q", sec, got, want)
		}
	}
}

package retention

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPeriod(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", time.Second}, {"retention: {done: 30d}", time.Hour}, {"retention: {failed: 12h}", 30 * time.Minute},
		{"retention: {done: 1s, failed: 90d}", time.Second},
	} {
		cfg, err := config.ParseConfig([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := Period(cfg); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestArchiver_Passes: with the clock set forward, the archiver moves a
// finished task at its first pass; Stop is safe twice.
func TestArchiver_Passes(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("host: h\nretention: {done: 30d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = t.TempDir()
	st := spool.NewStore(cfg, nil)
	st.Layout.Create()
	fin := time.Date(2025, 1, 10, 0, 0, 0, 0, time.UTC)
	tk := taskfile.Task{TaskID: "t", ModelKind: taskfile.KindAPI, Model: "m", Content: "x", State: taskfile.StateSuccess, FinishedAt: fin}
	data, _ := tk.Encode()
	p := st.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, "t")
	os.WriteFile(p, data, 0o640)
	os.Chtimes(p, fin, fin)
	passes := make(chan spool.ArchiveStats, 10)
	a := &Archiver{Store: st, Now: func() time.Time { return fin.Add(31 * 24 * time.Hour) },
		OnPass: func(s spool.ArchiveStats, err error) {
			if err != nil {
				t.Error(err)
			}
			passes <- s
		}}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-a.Started()
	if s := <-passes; s.Tasks != 1 {
		t.Errorf("first pass %+v", s)
	}
	a.Stop()
	a.Stop()
	if _, err := os.Stat(st.Layout.Archive(taskfile.KindAPI) + "/2025-01/done/t.yaml"); err != nil {
		t.Error(err)
	}
	(&Archiver{Store: spool.NewStore(&config.Config{}, nil)}).Stop()
	off := &Archiver{Store: spool.NewStore(&config.Config{}, nil)}
	off.Start(context.Background()) // no retention: nothing runs
	<-off.Started()
	off.Stop()
}

package browser

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The screenshot and page of the last three attempts are kept: saving
// attempt 5's removes those of attempts 1 and 2, whatever else is there.
func TestSaveArtefacts_KeepsLastThree(t *testing.T) {
	st := spool.NewStore(&config.Config{Spool: t.TempDir()}, nil)
	dir := st.Layout.Lane(taskfile.KindWeb, taskfile.DirLogs)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	names := []string{"T.1.png", "T.1.html", "T.2.png", "T.2.html", "T.3.png", "T.3.html", "T.4.png", "T.4.html", "T.log", "U.1.png"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	// A tab that is gone: nothing new can be saved, the old ones still go.
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	job := attempt.NewJob(&taskfile.Task{TaskID: "T"}, nil, nil)
	job.SetLogFiles(st.LogFiles(taskfile.KindWeb))
	if a := saveArtefacts(dead, job, "T", 5, nil, slog.New(slog.DiscardHandler)); a.String() != "" {
		t.Fatalf("saved %q from a dead tab", a)
	}
	for _, n := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		gone := n == "T.1.png" || n == "T.1.html" || n == "T.2.png" || n == "T.2.html"
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: stat %v; want removed %v", n, err, gone)
		}
	}
}

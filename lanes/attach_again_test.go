package lanes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A pending task whose intake record of its attachments is gone (the file
// was edited on the share: its seal failed and the daemon's fields were
// dropped; here, a pending file written by hand) runs as a fresh drop
// would: its attachments checked again by intake's rules before the
// attempt, the record in its final file; one that names a file intake
// would refuse fails with intake's reason, not with "submit it again".
func TestLane_AttachmentsCheckedAgain(t *testing.T) {
	cfg := testConfig(t, "")
	files := attach.FilesFolder(cfg.Spool)
	if err := os.MkdirAll(files, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "brief.txt"), []byte("春季新品：绿茶礼盒\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	pending := filepath.Join(cfg.Spool, "api", "pending")
	if err := os.MkdirAll(pending, 0o750); err != nil {
		t.Fatal(err)
	}
	for id, name := range map[string]string{"edited": "brief.txt", "gone": "missing.txt"} {
		body := "taskId: " + id + "\nmodel: fast\ncontent: write it up\nattachments: [" + name + "]\n"
		if err := os.WriteFile(filepath.Join(pending, id+".yaml"), []byte(body), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	r := start(t, cfg)
	r.sig.wait(t, 10*time.Second, "both tasks final", func() bool { return r.sig.finals(taskfile.KindAPI) == 2 })
	r.sig.mu.Lock()
	defer r.sig.mu.Unlock()
	ok, gone := r.sig.final[key(taskfile.KindAPI, "edited")], r.sig.final[key(taskfile.KindAPI, "gone")]
	if ok.State != taskfile.StateSuccess || len(ok.AttachmentsChecked) != 1 || ok.AttachmentsChecked[0].Name != "brief.txt" || ok.AttachmentsChecked[0].Size != len("春季新品：绿茶礼盒\n") {
		t.Errorf("edited: %s %q, checked %+v; want success with brief.txt checked again", ok.State, ok.Error, ok.AttachmentsChecked)
	}
	if gone.State != taskfile.StateFailed || gone.ErrorClass != taskfile.ClassInvalid || !strings.Contains(gone.Error, "attachments checked again") || !strings.Contains(gone.Error, "missing.txt") {
		t.Errorf("gone: %s %s %q; want failed invalid, checked again, naming missing.txt", gone.State, gone.ErrorClass, gone.Error)
	}
}

package frontdoor

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The door checks attachments exactly as intake will (spool.Store's
// CheckAttachments): a missing file or one with ".." is a 400 naming the
// reason, nothing dropped; a file in the spool's files/ is taken.
func TestDoor_Attachments(t *testing.T) {
	d, tok := newTestDoorWith(t, ", allow: [attachments]", "", "")
	files := attach.FilesFolder(d.st.Layout.Root)
	if err := os.MkdirAll(files, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "说明.txt"), []byte("notes"), 0o640); err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]string{
		`{"model":"writer","content":"x","attachments":["gone.txt"]}`:    `attachments: \"gone.txt\" not found`,
		`{"model":"writer","content":"x","attachments":["../说明.txt"]}`:   `contains \"..\"`,
		`{"model":"writer","content":"x","attachments":["/etc/passwd"]}`: "is not under the spool's files/",
	} {
		w := serve(d, http.MethodPost, "/api/v1/tasks", tok, body)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d %s; want 400 with %s", body, w.Code, w.Body, want)
		}
	}
	incoming := d.st.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	if ents, _ := os.ReadDir(incoming); len(ents) != 0 {
		t.Fatalf("a refused task was dropped: %d files", len(ents))
	}
	if w := serve(d, http.MethodPost, "/api/v1/tasks", tok, `{"model":"writer","content":"x","attachments":["说明.txt"]}`); w.Code != http.StatusCreated {
		t.Fatalf("a text file: %d %s", w.Code, w.Body)
	}
	ents, _ := os.ReadDir(incoming)
	if len(ents) != 1 {
		t.Fatalf("incoming holds %d files, want 1", len(ents))
	}
	data, _ := os.ReadFile(filepath.Join(incoming, ents[0].Name()))
	if !strings.Contains(string(data), "说明.txt") || strings.Contains(string(data), "attachmentsChecked") {
		t.Fatalf("the drop names its attachment and records nothing (intake does):\n%s", data)
	}
}

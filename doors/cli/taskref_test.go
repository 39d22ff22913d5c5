package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestResolveTask_ExitCodes: an ambiguous bare id is bad usage (exit 2)
// for each command that addresses a task, and names both candidates.
func TestResolveTask_ExitCodes(t *testing.T) {
	cfg := fixture.Spool(t)
	L := spool.NewLayout(cfg.Spool)
	put := func(k taskfile.Kind, dir string) {
		tk := taskfile.Task{TaskID: "dup", ModelKind: k, Model: "writer", Content: "x", State: taskfile.FolderState[dir]}
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(L.TaskPath(k, dir, "dup"), data, spool.FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	put(taskfile.KindWeb, taskfile.DirFailed)
	put(taskfile.KindAPI, taskfile.DirDone)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cancel", "dup"}, 2, "dup is in both lanes: web/dup (failed) and api/dup (success); name one as LANE/ID"},
		{[]string{"retry", "dup"}, 2, "dup is in both lanes"},
		{[]string{"results", "dup"}, 2, "dup is in both lanes"},
		{[]string{"cancel", "nope/dup"}, 2, `"nope" is not a lane`},
		{[]string{"cancel", "api/../x"}, 2, "is not a taskId"},
		{[]string{"cancel", "api/dup"}, 0, ""},
		{[]string{"retry", "api/dup"}, 2, "api/dup is success"},
		{[]string{"results", "web/dup"}, 0, ""},
		{[]string{"results", "web/none"}, 1, "web/none: no such task"},
		{[]string{"retry", "--batch", "b"}, 2, "--batch B and --failed go together"},
		{[]string{"retry", "--batch", "b", "--failed", "--class", "weird"}, 2, "--class \"weird\": want one of"},
		{[]string{"retry", "--batch", "b", "--failed", "x"}, 2, "not both"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			var stderr strings.Builder
			env := &Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
			args := append(tc.args, "--spool", cfg.Spool)
			code := exitCode(run(context.Background(), args, env), &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.want)
			}
		})
	}
}

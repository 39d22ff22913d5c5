//go:build unix

package shares

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// escapeBatch is a batch label of YAML escapes: clear screen, a window
// title (OSC), a C1 CSI and a bidi override.
const escapeBatch = `"\e[2J\e]0;pwned\a\x9b31m\u202eevil"`

// dropEscapes drops a task whose batch holds escapes, and a file whose
// name starts with ESC (no taskId: the name would be its id), which the
// suite then sees rejected.
func dropEscapes(h *hostileEnv) (string, []byte) {
	dropFile(h.t, h.in, "esc-batch.yaml", taskYAML("esc-batch", "fast", "escapes", "batch: "+escapeBatch))
	name := "\x1b[2Jname.yaml"
	return name, writeDrop(h.t, h.in, name, taskYAML("", "fast", "escapes in the name"))
}

// checkEscapes waits for the batch drop to end (run, or refused by
// validation), then reads the spool as an
// operator would: status, status --json, results and results --format csv
// must show no control, C1 or bidi character raw.
func checkEscapes(h *hostileEnv) {
	failed := h.l.Lane(taskfile.KindAPI, taskfile.DirFailed)
	outcome := ""
	testkit.Wait(h.t, "the escape-batch drop ended", 20*time.Second, func() bool {
		if _, err := os.Lstat(filepath.Join(failed, "esc-batch.error")); err == nil {
			outcome = "rejected"
		} else if h.l.Locate(taskfile.KindAPI, "esc-batch") == taskfile.DirDone {
			outcome = "run"
		}
		return outcome != ""
	})

	for _, args := range [][]string{{"status"}, {"status", "--json"}, {"results"}, {"results", "--format", "csv"}} {
		var out, errOut bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		if err := cli.Run(context.Background(), append(args, "--spool", h.r.Spool), env); err != nil {
			h.t.Errorf("%s: %v (%s)", strings.Join(args, " "), err, errOut.String())
			continue
		}
		shown := out.String() + errOut.String()
		for _, bad := range []string{"\x1b", "\a", "\u009b", "\u202e"} {
			if strings.Contains(shown, bad) {
				h.t.Errorf("%s shows %q raw: %.300q", strings.Join(args, " "), bad, shown)
			}
		}
		if outcome == "run" && !strings.Contains(shown, "pwned") {
			h.t.Errorf("%s does not show the escaped batch at all: %.300q", strings.Join(args, " "), shown)
		}
	}
	h.t.Logf("reliability: hostile %-36s batch drop %s; status, --json, results and csv show nothing raw", "escape bytes in output:", outcome)
}

package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
)

// commandWaitDelay is how long a killed command's output pipes may stay
// open (a grandchild that left the process group) before Wait gives up.
const commandWaitDelay = 2 * time.Second

// runCommand runs argv once with the event's JSON on stdin and its names in
// SPOOLGATE_EVENT, SPOOLGATE_EVENT_ID, SPOOLGATE_BATCH and SPOOLGATE_TASK.
// Exit status 0 is a delivery. At timeout the command is killed with its
// whole process group (on Windows, the process), so a hanging script and
// what it started do not pile up.
func runCommand(ctx context.Context, argv []string, timeout time.Duration, e *Event, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(data)
	cmd.Env = append(os.Environ(),
		"SPOOLGATE_EVENT="+e.Event, "SPOOLGATE_EVENT_ID="+e.ID,
		"SPOOLGATE_BATCH="+e.Batch, "SPOOLGATE_TASK="+e.TaskID)
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The command in a group of its own, and the context's cancel kills
	// the whole group where the OS can (else the process alone).
	fsx.OwnGroup(cmd, false)
	cmd.Cancel = func() error {
		if fsx.KillGroup(cmd.Process.Pid) {
			return nil
		}
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = commandWaitDelay
	err := cmd.Run()
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("command %s killed after its timeout %s; output: %q", argv[0], timeout, out.String())
	}
	return fmt.Errorf("command %s: %w; output: %q", argv[0], err, out.String())
}

// limitedBuffer keeps the first 2 KiB written to it: enough to log why a
// command failed.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 2048 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return strings.TrimSpace(l.b.String()) }

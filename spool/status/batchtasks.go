package status

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// BatchTask is one task of a batch as the snapshot read it: a page lists a
// batch's tasks from these without reading the spool again, and reads in
// full (Path) only the tasks it shows.
type BatchTask struct {
	Lane                               taskfile.Kind
	State                              taskfile.State // the folder's
	ID, Model, Path                    string
	Attempt                            int
	Priority                           taskfile.Priority
	SubmittedAt, StartedAt, FinishedAt time.Time
	// Usage and DoorToken (the front door's token that submitted it) are
	// as the file says: the batch page's totals count them.
	Usage     taskfile.Usage
	DoorToken string
	// ETA is a pending or running task's expected end by its lane's
	// simulation (the lane's ETA, task by task); zero when the lane has
	// no ETA (paused, no session can run) or the task waits on a held or
	// disabled account.
	ETA time.Time
	// FollowUp is the task whose chat it continues (a conversation's
	// turns are listed together).
	FollowUp string
	// Waits are the parents a pending chained task waits for, until its
	// claim fills it from them.
	Waits []string
	// Place is a pending task's place in its lane's queue (Queue.Place);
	// Wait why it does not start, besides the tasks ahead of it.
	Place int
	Wait  *Wait
}

// taskEnd is one task's expected end in its lane's simulation.
type taskEnd struct {
	batch, id string
	at        time.Time
}

// batchTasks lists batch's tasks of perLane, in submission order.
func batchTasks(perLane map[taskfile.Kind][]*task, batch string) []BatchTask {
	var out []BatchTask
	for _, k := range taskfile.Kinds {
		for _, t := range perLane[k] {
			if t.sum.batch != batch {
				continue
			}
			out = append(out, BatchTask{Lane: t.lane, State: taskfile.FolderState[t.dir], ID: t.sum.id, Model: t.sum.model, Path: t.path,
				Attempt: t.sum.attempt, Priority: t.sum.priority, SubmittedAt: t.sum.submittedAt, StartedAt: t.sum.startedAt, FinishedAt: t.sum.finishedAt,
				Usage: t.sum.usage, DoorToken: t.sum.doorToken, FollowUp: t.sum.followUp, Waits: t.sum.after})
		}
	}
	slices.SortStableFunc(out, func(a, b BatchTask) int {
		// As `spoolgate results`: by submission, a task without one last.
		if az, bz := a.SubmittedAt.IsZero(), b.SubmittedAt.IsZero(); az != bz {
			if az {
				return 1
			}
			return -1
		}
		if c := a.SubmittedAt.Compare(b.SubmittedAt); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(string(a.Lane), string(b.Lane)))
	})
	return out
}

package status

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// summary is the part of a task file the status view needs.
type summary struct {
	id, model, batch, owner, account, doorToken                string
	resultMethod, resultCheck, resultFallback                  string
	usage                                                      taskfile.Usage
	reasoning                                                  bool // keeps a reasoning model's thinking
	priority                                                   taskfile.Priority
	attempt                                                    int
	submittedAt, notBefore, startedAt, heartbeatAt, finishedAt time.Time
	attempts                                                   []taskfile.AttemptRecord // the timeline's bars: the last MaxAttemptRecords
	attemptsLeftOut                                            int                      // records of the file not kept (a file no daemon wrote)
	after                                                      []string                 // a chained task's parents, until it is filled
	followUp                                                   string                   // the task whose chat a follow-up continues
	parents                                                    string                   // all it waited for (after:, followUp:), for the timeline
}

func summaryOf(t *taskfile.Task) summary {
	s := fromSpool(taskfile.SummaryOf(t))
	s.attempts = t.Attempts
	if n := len(s.attempts); n > taskfile.MaxAttemptRecords {
		s.attempts = slices.Clone(s.attempts[n-taskfile.MaxAttemptRecords:])
		s.attemptsLeftOut = n - taskfile.MaxAttemptRecords
	}
	return s
}

func fromSpool(s taskfile.Summary) summary {
	return summary{
		id: s.TaskID, model: s.Model, batch: s.Batch, owner: s.Owner, account: s.Account, attempt: s.Attempt, priority: s.Priority, resultMethod: s.ResultMethod, resultCheck: s.ResultCheck, resultFallback: s.ResultFallback, usage: s.Usage, doorToken: s.DoorToken, reasoning: s.Reasoning,
		submittedAt: s.SubmittedAt, notBefore: s.NotBefore, startedAt: s.StartedAt,
		heartbeatAt: s.HeartbeatAt, finishedAt: s.FinishedAt, after: splitAfter(s.After), followUp: s.FollowUp, parents: s.Parents,
	}
}

// parseSummary reads the fields status needs from a task file. Task files
// in the state folders are written by spoolgate (Task.Encode), one
// top-level key per line, so a line scan finds them about ten times faster
// than a full YAML decode, which matters for spools of many thousands of
// files. Anything the scan does not understand (block or flow values,
// continuation lines, escapes) falls back to taskfile.DecodeTask.
func parseSummary(data []byte) (summary, bool) {
	if s, ok := scanSummary(data); ok {
		// A daemon keeps MaxAttemptRecords; a file with more (planted)
		// costs no more to draw, in time or memory.
		var total int
		if s.attempts, total, ok = taskfile.ScanAttemptsLast(data, taskfile.MaxAttemptRecords); ok {
			s.attemptsLeftOut = total - len(s.attempts)
			return s, true
		}
	}
	t, err := taskfile.DecodeRecord(data)
	if err != nil {
		return summary{}, false
	}
	return summaryOf(t), true
}

func scanSummary(data []byte) (summary, bool) {
	s, ok := taskfile.ScanSummary(bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF}))
	return fromSpool(s), ok
}

// splitAfter is a Summary's After as a list.
func splitAfter(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

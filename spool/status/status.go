// Package status builds the operator's view of a spool: per lane and per
// batch, counts by state, progress, running tasks, an ETA and whatever is
// held and why. It only reads the spool (never the lock, never a move), so
// it works from any machine that sees the share, with or without a daemon.
//
// The JSON form of Status is a stable interface (see SchemaVersion): fields
// are only ever added, never renamed or removed, without a version bump.
package status

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// SchemaVersion is the version of the JSON form of Status.
const SchemaVersion = 1

// Status is one snapshot of a spool.
type Status struct {
	// Version is SchemaVersion.
	Version int `json:"version"`
	// BatchTasks are the tasks of the batch a SnapshotTimeline asked for
	// (TimelineQuery.Batch), from the same reading; never in the JSON.
	BatchTasks []BatchTask `json:"-"`
	// Spool is the spool's absolute path.
	Spool string `json:"spool"`
	// Now is the time the snapshot was taken (UTC); ages and ETAs count from it.
	Now time.Time `json:"now"`
	// Incoming counts drops waiting in the lane-less <spool>/incoming/.
	Incoming int `json:"incoming"`
	// Lanes are always both lanes, web first, then api.
	Lanes []Lane `json:"lanes"`
	// Batches are the named batches with at least one task, sorted by name.
	// Tasks without a batch appear only in their lane.
	Batches []Batch `json:"batches"`
	// Failed lists the latest failed tasks of both lanes (of every batch,
	// and of none), newest finishedAt first, at most ListCap of them.
	Failed []Failed `json:"failed"`
	// FailedMore counts the failed tasks left out of Failed.
	FailedMore int `json:"failedMore"`
	// Accounts are the accounts held by a usage limit now (a hold file in
	// <spool>/accounts/ whose until has not passed), sorted by name.
	Accounts []Account `json:"accounts"`
	// Foreign lists the files among the daemons' coordination state
	// (account leases and holds, notify markers and since) that no daemon
	// of this installation wrote: ignored, never deleted (issue 20). At
	// most ListCap, by name; ForeignMore counts the rest.
	Foreign     []spool.Foreign `json:"foreign,omitempty"`
	ForeignMore int             `json:"foreignMore,omitempty"`
	// Seals, when not empty, says why seals were not checked (no key).
	Seals string `json:"seals,omitempty"`
	// Shares are the share probes the daemons left at start-up
	// (<spool>/probe.HOST), one per host, sorted by host: what the
	// spool's file system offers and the claim protocol in use; absent
	// until a daemon has run.
	Shares []spool.Probe `json:"shares,omitempty"`
}

// ListCap is the most entries Status.Failed and Lane.RejectedDrops hold;
// the rest are counted in FailedMore and RejectedMore.
const ListCap = 10

// Failed is one task in failed/.
type Failed struct {
	Lane   string `json:"lane"`
	TaskID string `json:"taskId"`
	Batch  string `json:"batch,omitempty"`
	// ErrorClass and Error are the task's own: why its last attempt failed.
	ErrorClass string `json:"errorClass"`
	Error      string `json:"error"`
	// Attempt counts the attempts it was given.
	Attempt    int        `json:"attempt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
}

// RejectedDrop is one drop that intake refused: NAME.yaml with NAME.error
// beside it in the lane's failed/. A rejected drop often has no readable
// taskId or batch: it is named by its file.
type RejectedDrop struct {
	// File is the drop's file name in failed/.
	File string `json:"file"`
	// Reason is the first line of NAME.error.
	Reason string `json:"reason"`
	// At is when it was rejected (NAME.error's modification time).
	At time.Time `json:"at"`
}

// Account is one account held by a usage limit.
type Account struct {
	Account string `json:"account"`
	// Held is true while the hold runs (always, in this list).
	Held bool `json:"held"`
	// Until is when the hold ends; the account's next task is tried then.
	// Null for a hold file that cannot be read, which holds until resumed.
	Until *time.Time `json:"until"`
	// Reason is the site's message ("Try again in 2 minutes").
	Reason string `json:"reason"`
	// Site is the site that showed it.
	Site string `json:"site,omitempty"`
	// Wait is the reset the message named ("2m0s"); empty when it named
	// none and the site's limitHold applied.
	Wait string `json:"wait,omitempty"`
	// Since is when the limit was met.
	Since *time.Time `json:"since,omitempty"`
	// Kind is "" for a usage limit, signedOut or challenge (which hold
	// until released: Until is null); Screenshot is then the page that
	// held it, relative to the spool.
	Kind       string `json:"kind,omitempty"`
	Screenshot string `json:"screenshot,omitempty"`
}

// FallingBack is a model whose first read method fell back on each of
// its last answers.
type FallingBack struct {
	Model   string `json:"model"`
	Answers int    `json:"answers"` // how many of its last answers, every one
	// Methods are the methods that did not deliver on the latest
	// ("network"), and Method the one that did ("dom").
	Methods string `json:"methods"`
	Method  string `json:"method"`
}

// Tokens are the tokens of successful answers as their APIs reported
// them, and what they cost where the models have a price; web answers'
// estimated counts are kept apart (Estimated), never added to these.
type Tokens struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	// Reasoning and Cached are the parts of Completion and Prompt the
	// APIs reported as reasoning and as read from their prompt cache.
	Reasoning int `json:"reasoning,omitempty"`
	Cached    int `json:"cached,omitempty"`
	// Cost is the sum of each answer's tokens at its model's price (per
	// million tokens, in the config's currency); absent when no answer's
	// model has a price. Answers of a model without one are counted in
	// the tokens and not in the cost (Unpriced says how many).
	Cost     *float64 `json:"cost,omitempty"`
	Unpriced int      `json:"unpriced,omitempty"`
	// Estimated totals the web answers' tokens as spoolgate's tokenizer
	// counted them (a chat page reports none); absent when there are none.
	Estimated *Estimated `json:"estimated,omitempty"`
}

// OtherModel is the ModelTokens key of answers of models the config
// does not name.
const OtherModel = "(other)"

// addModelTokens counts u under its model in ln.ModelTokens.
func (ln *Lane) addModelTokens(cfg *config.Config, model string, u taskfile.Usage, price *config.Price) {
	if _, ok := cfg.Model(model); !ok {
		model = OtherModel
	}
	if ln.ModelTokens == nil {
		ln.ModelTokens = map[string]Tokens{}
	}
	t := ln.ModelTokens[model]
	t.Add(u, price)
	ln.ModelTokens[model] = t
}

// Estimated are web answers' token counts, estimated.
type Estimated struct {
	Answers    int `json:"answers"` // how many answers they count
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Reasoning  int `json:"reasoning,omitempty"`
}

// Add counts one successful answer's usage u at its model's price.
func (t *Tokens) Add(u taskfile.Usage, price *config.Price) {
	if u.IsZero() {
		return
	}
	if u.Estimated {
		if t.Estimated == nil {
			t.Estimated = &Estimated{}
		}
		e := t.Estimated
		e.Answers++
		e.Prompt += u.PromptTokens
		e.Completion += u.CompletionTokens
		e.Reasoning += u.ReasoningTokens
		return
	}
	t.Prompt += u.PromptTokens
	t.Completion += u.CompletionTokens
	t.Reasoning += u.ReasoningTokens
	t.Cached += u.CachedTokens
	if price == nil {
		t.Unpriced++
		return
	}
	if t.Cost == nil {
		t.Cost = new(float64)
	}
	*t.Cost += price.Of(u)
}

// Sum adds o's counts to t's.
func (t *Tokens) Sum(o Tokens) {
	t.Prompt += o.Prompt
	t.Completion += o.Completion
	t.Reasoning += o.Reasoning
	t.Cached += o.Cached
	t.Unpriced += o.Unpriced
	if o.Cost != nil {
		if t.Cost == nil {
			t.Cost = new(float64)
		}
		*t.Cost += *o.Cost
	}
	if e := o.Estimated; e != nil {
		if t.Estimated == nil {
			t.Estimated = &Estimated{}
		}
		t.Estimated.Answers += e.Answers
		t.Estimated.Prompt += e.Prompt
		t.Estimated.Completion += e.Completion
		t.Estimated.Reasoning += e.Reasoning
	}
}

// IsZero leaves Tokens that count nothing out of the text report.
func (t Tokens) IsZero() bool { return t.Prompt == 0 && t.Completion == 0 && t.Estimated == nil }

// Counts are tasks by state. Total is pending+running+success+failed+canceled.
type Counts struct {
	Pending  int `json:"pending"`
	Running  int `json:"running"`
	Success  int `json:"success"`
	Failed   int `json:"failed"`
	Canceled int `json:"canceled"`
	Total    int `json:"total"`
}

// Finished is success+failed+canceled.
func (c Counts) Finished() int { return c.Success + c.Failed + c.Canceled }

// Progress is finished of total tasks.
type Progress struct {
	// Finished counts tasks in success, failed or canceled.
	Finished int `json:"finished"`
	// Total counts every task (rejected drops excluded).
	Total int `json:"total"`
	// Percent is 100*finished/total, rounded down; 0 when total is 0.
	Percent int `json:"percent"`
}

// Lane is one lane's view.
type Lane struct {
	// Lane is "web" or "api".
	Lane string `json:"lane"`
	// ends are the expected ends of its running tasks (the first queued)
	// and its pending ones in the order they will start, by the ETA's
	// simulation; they are an estimate only when estimated (the lane has
	// an ETA: not paused, some session can run). waits are its pending
	// tasks' own reasons to wait (QueueOf, the batch page).
	ends      []taskEnd
	queued    int
	estimated bool
	waits     map[string]Wait
	// Concurrency is how many tasks the lane runs at once: for web, one per
	// session (account), each running one at a time, always; for api,
	// api.concurrency.
	Concurrency int `json:"concurrency"`
	// RunnableSessions (web) counts the sessions that can run now (not
	// disabled, held or in standby); the lane's ETA counts on them.
	RunnableSessions *int `json:"runnableSessions,omitempty"`
	// Paused is true when <lane>/paused exists.
	Paused bool `json:"paused"`
	// Counts are the lane's tasks by the folder they sit in.
	Counts Counts `json:"counts"`
	// ResultMethods counts the lane's successful web answers (done/) by
	// how each was read: network, copy, dom or text (resultFormat is text
	// for text, markdown for the others). Absent when none says.
	ResultMethods map[string]int `json:"resultMethods,omitempty"`
	// ResultChecks counts the same answers by how each compares with what
	// the page showed: verified, differs or unchecked; Differs names the
	// first few that differ (see their resultDiff).
	ResultChecks map[string]int `json:"resultChecks,omitempty"`
	// Reasoning counts the lane's successful answers (done/) that keep a
	// reasoning model's thinking apart, in their `reasoning`.
	Reasoning int      `json:"reasoning,omitempty"`
	Differs   []string `json:"differs,omitempty"`
	// FallingBack names the models whose site's first read method fell
	// back on every one of their last answers (at least
	// minFallingBack of the last maxFallingBack): a key that no longer
	// reads the site (a `network:` path the site changed, a copy button
	// that moved) costs a slower method on every task, and is said here
	// rather than only in each task's log.
	FallingBack []FallingBack `json:"fallingBack,omitempty"`
	// Tokens total the lane's successful answers' tokens (done/), and
	// ModelTokens per model (a model no longer in the config, or a name
	// no config has, under OtherModel: a planted file adds no key).
	Tokens      Tokens            `json:"tokens,omitzero"`
	ModelTokens map[string]Tokens `json:"modelTokens,omitempty"`
	// Incoming counts drops waiting in <lane>/incoming/, not yet taken
	// (a daemon takes them within seconds; if they stay, none runs).
	Incoming int `json:"incoming"`
	// Rejected counts rejected drops in failed/ (NAME.yaml with NAME.error
	// beside it). They are not tasks and are in no other count.
	Rejected int `json:"rejected"`
	// RejectedDrops lists the latest of them, newest first, at most ListCap.
	RejectedDrops []RejectedDrop `json:"rejectedDrops"`
	// RejectedMore counts the rejected drops left out of RejectedDrops.
	RejectedMore int `json:"rejectedMore"`
	// Progress is finished of total.
	Progress Progress `json:"progress"`
	// Running lists the tasks in running/, oldest start first.
	Running []Running `json:"running"`
	// ETA estimates when the lane's runnable work ends.
	ETA ETA `json:"eta"`
	// Runner names who holds the web runner lock ("pid N on HOST"); empty
	// when free, unknown, or for the api lane.
	Runner string `json:"runner,omitempty"`
	// Held lists what keeps tasks from running, and why; empty when nothing.
	Held []Held `json:"held"`
	// Sessions are the web lane's sessions, one per account (web only).
	Sessions []Session `json:"sessions,omitempty"`
}

// Running is one task in running/.
type Running struct {
	TaskID string `json:"taskId"`
	Model  string `json:"model"`
	Batch  string `json:"batch,omitempty"`
	// Attempt is the attempt in progress, 1 for the first.
	Attempt int `json:"attempt"`
	// Owner is "host:pid" of the daemon running it.
	Owner     string    `json:"owner,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	// ElapsedSeconds is now minus startedAt.
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	// HeartbeatAt is the last heartbeat; absent before the first.
	HeartbeatAt *time.Time `json:"heartbeatAt,omitempty"`
	// HeartbeatAgeSeconds is now minus heartbeatAt (or startedAt when no
	// beat was written yet).
	HeartbeatAgeSeconds float64 `json:"heartbeatAgeSeconds"`
	// Stale is true when the heartbeat is older than staleAfter: the owner is
	// probably gone and the task will be reclaimed.
	Stale bool `json:"stale"`
	// Delivery (web) is how the running attempt delivered its prompt so
	// far: sent, reattached or resent (absent before it reached the
	// page); Conversation the conversation's URL.
	Delivery     string `json:"delivery,omitempty"`
	Conversation string `json:"conversation,omitempty"`
}

// ETA is a lane's or a batch's estimate.
type ETA struct {
	// Seconds until the runnable work is done; 0 when nothing is left. For a
	// lane, tasks of a disabled account are left out (Note says so) and it
	// is null when the lane is paused with work left. For a batch it is
	// null when any of its remaining tasks is in a paused lane or waits on a
	// disabled account.
	Seconds *float64 `json:"seconds"`
	// At is Now+Seconds; null with Seconds.
	At *time.Time `json:"at"`
	// TypicalSeconds is the per-task duration the estimate uses: the median
	// of finishedAt-startedAt over the lane's last 50 successes, or the
	// lane's default (api 15s, web 120s) when it has none. 0 in a batch's
	// overall ETA, which spans lanes: see its lanes for theirs.
	TypicalSeconds float64 `json:"typicalSeconds"`
	// Samples is how many successes the median is taken over; 0 means the
	// default was used (or, in a batch's overall ETA, not applicable).
	Samples int `json:"samples"`
	// Note says why Seconds is null, if it is.
	Note string `json:"note,omitempty"`
}

// Batch is one batch's view across both lanes.
type Batch struct {
	// Batch is the label from the tasks' `batch:` field.
	Batch    string   `json:"batch"`
	Counts   Counts   `json:"counts"`
	Progress Progress `json:"progress"`
	// ETA is the latest of its lanes' ETAs; null if any of them is.
	ETA ETA `json:"eta"`
	// Lanes are the batch's share of each lane that has any of its tasks.
	Lanes []BatchLane `json:"lanes"`
	// Tokens total its successful answers' tokens, and their cost.
	Tokens Tokens `json:"tokens,omitzero"`
}

// BatchLane is a batch's share of one lane.
type BatchLane struct {
	Lane     string   `json:"lane"`
	Counts   Counts   `json:"counts"`
	Progress Progress `json:"progress"`
	// ETA is when the lane finishes the batch's last task, given the lane's
	// queue order (notBefore, submittedAt, taskId) and concurrency.
	ETA    ETA    `json:"eta"`
	Tokens Tokens `json:"tokens,omitzero"`
}

func progressOf(c Counts) Progress {
	p := Progress{Finished: c.Finished(), Total: c.Total}
	if c.Total > 0 {
		p.Percent = 100 * p.Finished / c.Total
	}
	return p
}

func (c *Counts) add(dir string) {
	switch dir {
	case "pending":
		c.Pending++
	case "running":
		c.Running++
	case "done":
		c.Success++
	case "failed":
		c.Failed++
	case "canceled":
		c.Canceled++
	}
	c.Total++
}

// Package timeline draws a spool's attempts over time as one SVG: a row
// per API slot and per web session, each attempt a bar from its claim to
// its end coloured by its outcome, pauses and account holds as shaded
// spans, and a line at now. It is a pure function of its Chart: no clock,
// no disk, no script and no external asset, so the status page can inline
// it under its Content-Security-Policy and every host that reads the same
// spool draws the same picture.
package timeline

import (
	"cmp"
	"slices"
	"time"
)

// Outcome is how an attempt ended, as the task file's attempts record it.
type Outcome string

const (
	Success  Outcome = "success"
	Retried  Outcome = "retried"  // failed, and went back to pending for another attempt
	Failed   Outcome = "failed"   // failed for good
	Canceled Outcome = "canceled" // canceled by request
	Held     Outcome = "held"     // met a usage limit: the account is held, the attempt not spent
	Returned Outcome = "returned" // handed back unspent (shutdown)
	Running  Outcome = "running"  // not ended yet: drawn up to now
)

// Outcomes lists the outcomes in the legend's order.
var Outcomes = []Outcome{Success, Retried, Failed, Canceled, Held, Returned, Running}

// Colour is the fill of an outcome's bars (the legend in docs/operators.md).
func Colour(o Outcome) string {
	switch o {
	case Success:
		return "#2f9e5b"
	case Retried:
		return "#e8a23a"
	case Failed:
		return "#d64541"
	case Canceled:
		return "#8d939c"
	case Held:
		return "#8b5cc7"
	case Returned:
		return "#c3c8cf"
	case Running:
		return "#3b7ddd"
	}
	return "#555555"
}

// Row is one line of the chart: an API slot or a web session.
type Row struct {
	Key   string // what bars and spans name in Row
	Lane  string // "api" or "web": rows are grouped by lane, in the order given
	Label string // shown at the left: "slot 1", the account's name
}

// Bar is one attempt.
type Bar struct {
	Row        string
	Start, End time.Time // claim and end; End zero while it runs (drawn to Now)
	Outcome    Outcome
	Lane       string
	Task       string
	Batch      string
	Model      string
	Attempt    int
	Class      string // errorClass of a failed attempt
	Href       string // the task's page, "" for none (a file on its own)
}

// Span is a shaded stretch of time: a lane's pause (Row "" and Lane set:
// every row of the lane) or an account's hold (Row set).
type Span struct {
	Kind       SpanKind
	Lane       string
	Row        string
	Start, End time.Time // End zero: still on (drawn to Now)
	Note       string    // its title: who paused, the limit's message
}

// SpanKind says what a Span shades.
type SpanKind string

const (
	Pause SpanKind = "paused"
	Hold  SpanKind = "held"
	// Wait shades, in the row where a chained task or a follow-up first
	// ran, the time it waited for its parents: from its submission to its
	// first claim.
	Wait SpanKind = "waited"
)

// Labels are the chart's words, in the page's language.
type Labels struct {
	Title    string // the SVG's accessible name
	Now      string
	Attempt  string // "attempt"
	Batch    string
	Model    string
	Took     string // "took"
	Attempts string // "%d attempts" for bars too narrow to draw apart
	Paused   string
	Held     string
	Waited   string // a chained task's wait for its parents
	Empty    string // no attempt in the span
	LeftOut  string // "%d attempts not drawn": over a row's or a task's bound
	Slot     string // "slot %d": an API row's name
	Outcome  map[Outcome]string
	Lanes    map[string]string // "api" -> "API slots"
	// Classes are the error classes in these words; a class not in it is
	// shown as the task file spells it.
	Classes map[string]string
}

// LabelsEN are the English labels.
var LabelsEN = Labels{
	Title: "timeline of attempts", Now: "now", Attempt: "attempt", Batch: "batch", Model: "model", Took: "took",
	Attempts: "%d attempts", Paused: "lane paused", Held: "account held by a usage limit", Waited: "waited for its parents", Empty: "no attempt in this span", Slot: "slot %d",
	LeftOut: "%d attempts not drawn",
	Outcome: map[Outcome]string{Success: "success", Retried: "retried", Failed: "failed", Canceled: "canceled",
		Held: "held by a usage limit", Returned: "handed back", Running: "running"},
	Lanes: map[string]string{"api": "API slots", "web": "web sessions"},
}

// LabelsZH are the Chinese labels.
var LabelsZH = Labels{
	Title: "尝试时间线", Now: "现在", Attempt: "第几次尝试", Batch: "批次", Model: "模型", Took: "用时",
	Attempts: "%d 次尝试", Paused: "通道已暂停", Held: "账号因用量限制暂停", Waited: "等待前置任务", Empty: "这段时间没有尝试", Slot: "槽位 %d",
	LeftOut: "%d 次尝试未画出",
	Outcome: map[Outcome]string{Success: "成功", Retried: "已重试", Failed: "失败", Canceled: "已取消",
		Held: "遇到用量限制", Returned: "已交回", Running: "运行中"},
	Lanes: map[string]string{"api": "API 槽位", "web": "网页会话"},
	Classes: map[string]string{"transient": "暂时性错误", "permanent": "永久性错误", "invalid": "无效任务",
		"duplicate": "重复提交", "schema": "不符合输出格式", "canceled": "已取消", "parent": "前置任务失败",
		"stale": "心跳超时", "account": "账号问题", "environment": "运行环境问题"},
}

// Chart is everything one picture shows.
type Chart struct {
	From, To time.Time // the span drawn
	Now      time.Time // the now-line, if within the span
	Loc      *time.Location
	Rows     []Row
	Bars     []Bar
	Spans    []Span
	Labels   Labels
	// LeftOut counts the attempts not drawn: beyond MaxBarsPerRow in a
	// row, or beyond the records a daemon keeps of one task.
	LeftOut int
}

// MaxBarsPerRow bounds the bars a row draws, the latest kept: far more
// than a row can show apart, and a bound on the page's size and time
// whatever the spool holds.
const MaxBarsPerRow = 1000

// CapRows keeps at most MaxBarsPerRow bars in each row, the latest by
// start, and counts the rest in LeftOut.
func (c *Chart) CapRows() {
	per := map[string]int{}
	for _, b := range c.Bars {
		per[b.Row]++
	}
	over := false
	for _, n := range per {
		over = over || n > MaxBarsPerRow
	}
	if !over {
		return
	}
	slices.SortStableFunc(c.Bars, func(a, b Bar) int { return b.Start.Compare(a.Start) }) // latest first
	kept := c.Bars[:0]
	seen := map[string]int{}
	for _, b := range c.Bars {
		if seen[b.Row]++; seen[b.Row] <= MaxBarsPerRow {
			kept = append(kept, b)
		} else {
			c.LeftOut++
		}
	}
	slices.Reverse(kept)
	c.Bars = kept
}

// PackSlots gives each bar of rows it has no row for (an API attempt: the
// lane records no slot) the lowest numbered row free at its start, so a
// lane that ran n attempts at once shows n rows. Bars are packed in order
// of start; rowKey names row i. It returns how many rows it used.
func PackSlots(bars []*Bar, now time.Time, rowKey func(i int) string) int {
	slices.SortStableFunc(bars, func(a, b *Bar) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Attempt, b.Attempt))
	})
	var busyUntil []time.Time
	for _, b := range bars {
		end := b.End
		if end.IsZero() {
			end = now
		}
		i := 0
		for i < len(busyUntil) && busyUntil[i].After(b.Start) {
			i++
		}
		if i == len(busyUntil) {
			busyUntil = append(busyUntil, end)
		} else {
			busyUntil[i] = end
		}
		b.Row = rowKey(i)
	}
	return len(busyUntil)
}

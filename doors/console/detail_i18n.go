package console

import (
	"fmt"
	"html/template"
	"regexp"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// detailLabels are the fixed words of the timeline, the task page and the
// batch page, in the status page's languages (labelsFor picks).
type detailLabels struct {
	Timeline, Last, Hide, Back                                         string
	TaskPage, Fields, Folder, Archived, Attempts                       string
	Claimed, Started, Ended, Took, Outcome, Class                      string
	Account, Owner, Method, HeldUntil, NoAttempts                      string
	Prompt, Content, Result, Rendered, Source, Log                     string
	LogCut, NoLog, Screenshots, AttemptN, SavedPage                    string
	Unreadable, Rejected, Files                                        string
	BatchPage, Progress, ETA, Failures, Retry, RetryNote               string
	Downloads, CSV, CSVGB, XLSX, JSONL, NoFailures, Lane, Task, Reason string
	Tasks, All, Order, OrderNote, Name, Model, PageOf                  string
	Prev, Next, NoTasks, WaitPaused, WaitParents                       string
	Fold                                                               string // a long text folded: its lines and bytes
	Outcomes                                                           map[string]string
}

var (
	detailEN = detailLabels{
		Timeline: "timeline", Last: "last", Hide: "hide", Back: "status",
		TaskPage: "task", Fields: "fields", Folder: "folder", Archived: "archived", Attempts: "attempts",
		Claimed: "claimed", Started: "started", Ended: "ended", Took: "took", Outcome: "outcome", Class: "class",
		Account: "account", Owner: "owner", Method: "method", HeldUntil: "held until", NoAttempts: "no attempt recorded",
		Prompt: "prompt", Content: "content", Result: "result", Rendered: "rendered", Source: "Markdown source", Log: "log",
		LogCut: "the last %d KiB of the log", NoLog: "no log", Screenshots: "failure screenshots", AttemptN: "attempt %s",
		SavedPage: "saved page (download)", Unreadable: "the task file cannot be read: ", Rejected: "rejected drop: ", Files: "generated files",
		BatchPage: "batch", Progress: "progress", ETA: "ETA", Failures: "failed tasks", Retry: "retry the failed tasks",
		RetryNote: "run where spoolgate's config is (add --config FILE if it is not ./spoolgate.yaml)",
		Downloads: "results", CSV: "CSV", CSVGB: "CSV (GB18030, for older Excel and WPS)", XLSX: "Excel (XLSX)", JSONL: "JSON Lines", NoFailures: "no failed task", Lane: "lane", Task: "task", Reason: "reason",
		Tasks: "tasks", All: "all", Order: "#", OrderNote: "pending tasks in the order they are taken: priority first, then submission", Name: "name", Model: "model",
		PageOf: "page %d of %d", Prev: "← previous", Next: "next →", NoTasks: "no task in this state",
		WaitPaused: "waits: its lane is paused", WaitParents: "waits for %s", Fold: "show all: %d lines, %d bytes",
		Outcomes: outcomeWords(timeline.LabelsEN),
	}
	detailZH = detailLabels{
		Timeline: "时间线", Last: "最近", Hide: "隐藏", Back: "状态页",
		TaskPage: "任务", Fields: "字段", Folder: "文件夹", Archived: "已归档", Attempts: "尝试记录",
		Claimed: "领取", Started: "开始", Ended: "结束", Took: "用时", Outcome: "结果", Class: "错误类别",
		Account: "账号", Owner: "执行者", Method: "读取方式", HeldUntil: "暂停至", NoAttempts: "没有尝试记录",
		Prompt: "系统提示词", Content: "内容", Result: "结果", Rendered: "渲染后", Source: "Markdown 原文", Log: "日志",
		LogCut: "日志的最后 %d KiB", NoLog: "没有日志", Screenshots: "失败截图", AttemptN: "第 %s 次尝试",
		SavedPage: "保存的网页（下载）", Unreadable: "无法读取任务文件：", Rejected: "被拒收的文件：", Files: "生成的文件",
		BatchPage: "批次", Progress: "进度", ETA: "预计完成", Failures: "失败的任务", Retry: "重试失败的任务",
		RetryNote: "在 spoolgate 配置所在的目录运行（配置文件不是 ./spoolgate.yaml 时加 --config 文件路径）",
		Downloads: "结果", CSV: "CSV", CSVGB: "CSV（GB18030，适用于旧版 Excel 和 WPS）", XLSX: "Excel 表格（XLSX）", JSONL: "JSON Lines", NoFailures: "没有失败的任务", Lane: "通道", Task: "任务", Reason: "原因",
		Tasks: "任务列表", All: "全部", Order: "序号", OrderNote: "等待中的任务按领取顺序排列：先按优先级，再按提交时间", Name: "名称", Model: "模型",
		PageOf: "第 %d 页，共 %d 页", Prev: "← 上一页", Next: "下一页 →", NoTasks: "此状态下没有任务",
		WaitPaused: "等待：所在通道已暂停", WaitParents: "等待前置任务：%s", Fold: "展开全部：%d 行，%d 字节",
		Outcomes: outcomeWords(timeline.LabelsZH),
	}
)

func outcomeWords(l timeline.Labels) map[string]string {
	m := map[string]string{}
	for o, w := range l.Outcome {
		m[string(o)] = w
	}
	return m
}

// detail is the detail pages' labels in l's language.
func (l pageLabels) detail() detailLabels {
	if l.Lang == labelsZH.Lang {
		return detailZH
	}
	return detailEN
}

// timeline is the timeline's labels in l's language.
func (l pageLabels) timeline() timeline.Labels {
	if l.Lang == labelsZH.Lang {
		return timeline.LabelsZH
	}
	return timeline.LabelsEN
}

// The words the pages take from the spool's own vocabulary (field names,
// error classes, levels, session states, ETA lines), in Chinese; English
// pages show them as the files and `spoolgate status` spell them.
var (
	fieldNamesZH = map[string]string{"taskId": "任务 ID", "lane": "通道", "state": "状态", "model": "模型", "batch": "批次",
		"priority": "优先级", "output": "输出文件", "attempt": "尝试次数", "submittedAt": "提交时间", "notBefore": "最早开始",
		"startedAt": "开始时间", "heartbeatAt": "最近心跳", "finishedAt": "结束时间", "owner": "执行者", "account": "账号",
		"browserPid": "浏览器进程号", "errorClass": "错误类别", "error": "错误", "title": "标题",
		"after": "等待的任务", "followUp": "接续的对话", "waits": "正在等待",
		"queue": "排队位置", "eta": "预计完成", "held": "等待原因",
		"usage": "令牌用量", "resultFormat": "结果格式", "resultMethod": "读取方式", "resultCheck": "结果核对", "resultDiff": "与页面的差异"}
	classesZH  = timeline.LabelsZH.Classes
	sessionsZH = map[string]string{"running": "运行中", "idle": "空闲", "disabled": "已停用", "held": "暂停中", "paused": "已由操作员暂停",
		"logged out": "已退出登录", "signed out": "已退出登录", "challenge": "遇到人机验证", "leased by another host": "由另一台主机租用",
		"standby": "待命", "blocked by a foreign file": "被外来文件挡住"}
	etaNotesZH = []struct {
		re *regexp.Regexp
		to string
	}{
		{regexp.MustCompile(`lane paused`), "通道已暂停"},
		{regexp.MustCompile(status.OverdueNote), "运行时间已超过通常用时"},
		{regexp.MustCompile(`no web session can run \(every account disabled, held or in standby\)`), "没有可运行的网页会话（所有账号都已停用、暂停或待命）"},
		{regexp.MustCompile(`excludes (\d+) tasks? held by a disabled account`), "不含被停用账号占用的 $1 个任务"},
		{regexp.MustCompile(`excludes (\d+) tasks? of disabled or held accounts`), "不含停用或暂停账号的 $1 个任务"},
	}
)

// usageZH are the words of a task's usage line (usageText).
var usageZH = strings.NewReplacer(" prompt", " 提示", " cached)", " 缓存)", " completion", " 生成", " reasoning)", " 推理)", ", estimated", "，估算")

// usageWords is a usage line in the page's language.
func (l pageLabels) usageWords(s string) string {
	if l.Lang != labelsZH.Lang {
		return s
	}
	return usageZH.Replace(s)
}

// word is s from one of the maps above on a Chinese page, else s.
func (l pageLabels) word(m map[string]string, s string) string {
	if w, ok := m[s]; ok && l.Lang == labelsZH.Lang {
		return w
	}
	return s
}

// clockZH is t as a local clock time, with the date if not today.
func clockZH(now, t time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Format("2006-01-02") == now.Format("2006-01-02") {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}

// etaText is report.ETAText in the page's language.
func etaText(l pageLabels, now time.Time, e status.ETA, basis bool) string {
	if l.Lang != labelsZH.Lang {
		return report.ETAText(now, e, basis)
	}
	note := e.Note
	for _, p := range etaNotesZH {
		note = p.re.ReplaceAllString(note, p.to)
	}
	var s string
	switch {
	case e.Seconds == nil:
		s = "未知（" + note + "）"
	case *e.Seconds == 0 && strings.HasPrefix(e.Note, status.OverdueNote):
		s = "即将完成（" + note + "）"
	case *e.Seconds == 0 && note != "":
		s = "已完成（" + note + "）"
	case *e.Seconds == 0:
		s = "已完成"
	default:
		s = report.Dur(*e.Seconds) + "（" + clockZH(now, *e.At) + "）"
		if note != "" {
			s += "，" + note
		}
	}
	if basis && e.Samples > 0 {
		s += fmt.Sprintf("；通常 %s：最近 %d 次成功的中位数", report.Dur(e.TypicalSeconds), e.Samples)
	} else if basis {
		s += fmt.Sprintf("；通常 %s：默认值，尚无成功记录", report.Dur(e.TypicalSeconds))
	}
	return s
}

// sessionText is report.SessionStateText in the page's language.
func sessionText(l pageLabels, now time.Time, s status.Session) string {
	if l.Lang != labelsZH.Lang {
		return report.SessionStateText(now, s)
	}
	switch {
	case s.State == taskfile.SessionRunning:
		return fmt.Sprintf("运行 %s（心跳 %s 前）", s.Task, report.Dur(s.HeartbeatAgeSeconds))
	case s.State == taskfile.SessionHeld && s.HeldUntil != nil:
		return "暂停至 " + clockZH(now, *s.HeldUntil)
	case s.State == taskfile.SessionIdle && s.PacedUntil != nil:
		return "限速至 " + clockZH(now, *s.PacedUntil) + "（" + s.PacedBy + "）"
	}
	return l.word(sessionsZH, s.State)
}

// waitText is why a pending task waits (status.Wait), in the page's
// language: account names, a site's message and a pace's rule as written.
func waitText(l pageLabels, now time.Time, w *status.Wait) string {
	if w == nil {
		return ""
	}
	zh := l.Lang == labelsZH.Lang
	clock := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		if zh {
			return clockZH(now, *t)
		}
		return report.ShortTime(now, *t)
	}
	reason := func(sep string) string {
		if w.Reason == "" {
			return ""
		}
		return sep + safetext.Line(w.Reason)
	}
	a := safetext.Line(w.Account)
	switch w.Kind {
	case status.HeldPaused:
		if zh {
			return "等待：所在通道已暂停"
		}
		return "waits: its lane is paused"
	case status.HeldPaced:
		if zh {
			return "账号 " + a + " 限速至 " + clock(w.Until) + "（" + safetext.Line(w.Reason) + "）"
		}
		return "account " + a + " paced until " + clock(w.Until) + " (" + safetext.Line(w.Reason) + ")"
	case status.HeldDeferred:
		if zh {
			return "重试退避，最早 " + clock(w.Until) + " 开始"
		}
		return "retry back-off until " + clock(w.Until)
	case status.HeldQuota:
		if zh {
			return "模型 " + safetext.Line(w.Model) + " 的额度已用尽（429），暂停至 " + clock(w.Until)
		}
		return "model " + safetext.Line(w.Model) + "'s quota is spent (429) until " + clock(w.Until)
	case status.HeldAccount:
		if w.Hold == status.HoldDisabled && !zh {
			return disabledWords(a)
		}
		words, ok := holdWords[w.Hold]
		if !ok {
			words = holdWords[""]
		}
		lang, sep := 0, ": "
		if zh {
			lang, sep = 1, "："
		}
		if w.Hold == status.HoldLimit {
			return fmt.Sprintf(words[lang], a, clock(w.Until)) + reason(sep)
		}
		return fmt.Sprintf(words[lang], a) + reason(sep)
	}
	return w.Kind
}

// holdWords say, in English and Chinese, that an account (%s) keeps a
// task waiting by its state (status.Wait.Hold); a usage limit's say
// until when (%s).
var holdWords = map[string][2]string{
	status.HoldDisabled:    {"account %s is disabled", "账号 %s 已停用"},
	status.HoldLimit:       {"account %s held by a usage limit until %s", "账号 %s 因用量限制暂停至 %s"},
	taskfile.HoldSignedOut: {"account %s signed out: an operator must sign in", "账号 %s 已退出登录，等操作员重新登录"},
	taskfile.HoldChallenge: {"account %s held by a challenge: an operator must clear it", "账号 %s 遇到人机验证，等操作员处理"},
	taskfile.HoldPaused:    {"account %s paused by an operator", "账号 %s 已由操作员暂停"},
	"":                     {"account %s held", "账号 %s 暂停中"},
}

// disabledWords says that an account, or several joined by ", ", is
// disabled.
func disabledWords(a string) string {
	if strings.Contains(a, ", ") {
		return "accounts " + a + " are disabled"
	}
	return "account " + a + " is disabled"
}

// heldHTML is one of a lane's held lines: in English the snapshot's
// message as written (it names the commands to run); in Chinese built
// from the line's fields, with names, a site's words and the commands
// kept as written and marked so.
func heldHTML(l pageLabels, now time.Time, lane string, h status.Held) template.HTML {
	esc := template.HTMLEscapeString
	if l.Lang != labelsZH.Lang {
		return template.HTML(`<span translate="no">` + esc(h.Message) + `</span>`) //nolint:gosec // escaped
	}
	data := func(s string) string { return `<span translate="no">` + esc(safetext.Line(s)) + `</span>` }
	cmd := func(s string) string { return `<code>` + esc(s) + `</code>` }
	clock := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return clockZH(now, *t)
	}
	n := fmt.Sprintf("%d 个任务在等待：", h.Count)
	acct := "账号 " + data(h.Account)
	resume := "（恢复：" + cmd("spoolgate resume --account "+h.Account) + "）"
	reason := ""
	if h.Reason != "" {
		reason = "：" + data(h.Reason)
	}
	var s string
	switch {
	case h.Kind == status.HeldPaused && h.Host != "":
		s = "通道在主机 " + data(h.Host) + " 上已暂停（恢复：" + cmd("spoolgate resume "+lane+" --host "+safetext.ShellArg(h.Host)) + "）"
	case h.Kind == status.HeldPaused:
		s = "通道已暂停：不再领取新任务（恢复：" + cmd("spoolgate resume "+lane) + "）"
	case h.Kind == status.HeldAccount && h.Hold == status.HoldDisabled:
		s = n + acct + " 已停用"
	case h.Kind == status.HeldAccount && h.Hold == status.HoldLimit:
		s = n + acct + " 因用量限制暂停至 " + clock(h.Until) + reason + resume
	case h.Kind == status.HeldAccount && h.Hold == taskfile.HoldPaused:
		s = n + acct + " 已由操作员暂停" + reason + resume
	case h.Kind == status.HeldAccount && (h.Hold == taskfile.HoldSignedOut || h.Hold == taskfile.HoldChallenge):
		what := " 已退出登录"
		if h.Hold == taskfile.HoldChallenge {
			what = " 遇到人机验证"
		}
		s = n + acct + what + reason + "（登录：" + cmd("spoolgate login "+h.Site+" --account "+h.Account) + "；或 " + cmd("spoolgate resume --account "+h.Account) + "）"
	case h.Kind == status.HeldAccount:
		s = n + acct + " 暂停中" + reason + resume
	case h.Kind == status.HeldPaced:
		s = n + acct + " 限速至 " + clock(h.Until) + "（" + data(h.Reason) + "）"
	case h.Kind == status.HeldStandby && h.Holder != "":
		s = "本守护进程处于待命，排在 " + data(h.Holder) + " 之后"
	case h.Kind == status.HeldStandby:
		s = "本守护进程处于待命：另一个进程在运行网页通道"
	case h.Kind == status.HeldRunner:
		s = n + fmt.Sprintf("网页运行锁被主机 %s 上的进程 %d 占用，但它没有在运行任务（是登录会话吗？）", data(h.Host), h.PID)
	case h.Kind == status.HeldDeferred:
		s = fmt.Sprintf("%d 个任务推迟到 %s（重试退避）", h.Count, clock(h.Until))
	case h.Kind == status.HeldChain && h.Task != "":
		s = "任务 " + data(h.Task) + " 等待前置任务 " + data(strings.Join(h.Parents, ", "))
	case h.Kind == status.HeldChain:
		s = fmt.Sprintf("另有 %d 个任务在等待前置任务（%s）", h.Count, cmd("after:"))
	default:
		s = data(h.Message)
	}
	return template.HTML(s) //nolint:gosec // every piece from the spool escaped
}

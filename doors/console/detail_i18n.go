package console

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
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
		WaitPaused: "waits: its lane is paused", WaitParents: "waits for %s",
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
		WaitPaused: "等待：所在通道已暂停", WaitParents: "等待前置任务：%s",
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
		"usage": "令牌用量", "resultFormat": "结果格式", "resultMethod": "读取方式", "resultCheck": "结果核对", "resultDiff": "与页面的差异"}
	classesZH = map[string]string{"transient": "暂时性错误", "permanent": "永久性错误", "invalid": "无效任务",
		"duplicate": "重复提交", "schema": "不符合输出格式", "canceled": "已取消", "parent": "前置任务失败"}
	sessionsZH = map[string]string{"running": "运行中", "idle": "空闲", "disabled": "已停用", "held": "暂停中", "paused": "已由操作员暂停",
		"logged out": "已退出登录", "signed out": "已退出登录", "challenge": "遇到人机验证", "leased by another host": "由另一台主机租用",
		"standby": "待命", "blocked by a foreign file": "被外来文件挡住"}
	etaNotesZH = []struct {
		re *regexp.Regexp
		to string
	}{
		{regexp.MustCompile(`lane paused`), "通道已暂停"},
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

package console

import "github.com/spoolgate/spoolgate/spool/status/timeline"

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
	Prev, Next, NoTasks                                                string
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
		RetryNote: "在 spoolgate 配置所在的目录运行（配置不是 ./spoolgate.yaml 时加 --config FILE）",
		Downloads: "结果", CSV: "CSV", CSVGB: "CSV（GB18030，适用于旧版 Excel 和 WPS）", XLSX: "Excel 表格（XLSX）", JSONL: "JSON Lines", NoFailures: "没有失败的任务", Lane: "通道", Task: "任务", Reason: "原因",
		Tasks: "任务列表", All: "全部", Order: "序号", OrderNote: "等待中的任务按领取顺序排列：先按优先级，再按提交时间", Name: "名称", Model: "模型",
		PageOf: "第 %d 页，共 %d 页", Prev: "← 上一页", Next: "下一页 →", NoTasks: "此状态下没有任务",
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

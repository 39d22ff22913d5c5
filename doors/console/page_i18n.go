package console

import (
	"net/http"

	"golang.org/x/text/language"
)

// pageLabels are the fixed words of the status page. Only the labels are
// translated: task ids, batch names, model names, ETA figures and the
// held reasons (which name commands to run) stay as spoolgate wrote them.
type pageLabels struct {
	Lang                                        string // the page's lang attribute
	Title, Spool, Refreshes, Lane, Concurrency  string
	Runner, Paused, ETA                         string
	Pending, Running, Success, Failed, Canceled string
	Rejected, Incoming                          string
	Task, Model, Attempt, Elapsed, Heartbeat    string
	TaskCol                                     string // a task column's head (Task heads the running table)
	Owner, Ago, Stale, Held, Batches, NoBatches string
	RejectedDrops, File, Reason, When           string
	FailedTasks, Batch, Class, Attempts, More   string
	AccountHeld, Until                          string
	AccountSignedOut, AccountChallenge          string
	AccountPaused                               string
	Screenshot                                  string
	Sessions, Account, Site, State, Lease       string
	Finished                                    string
	Foreign, Kind                               string
}

var (
	labelsEN = pageLabels{
		Lang: "en", Title: "spoolgate status", Spool: "spool", Refreshes: "refreshes every %ds",
		Lane: "lane", Concurrency: "concurrency", Runner: "runner", Paused: "PAUSED", ETA: "ETA",
		Pending: "pending", Running: "running", Success: "success", Failed: "failed", Canceled: "canceled",
		Rejected: "rejected", Incoming: "incoming",
		Task: "running", TaskCol: "task", Model: "model", Attempt: "attempt", Elapsed: "elapsed", Heartbeat: "heartbeat",
		Owner: "owner", Ago: " ago", Stale: "(stale)", Held: "held: ", Batches: "batches", NoBatches: "no batches",
		RejectedDrops: "rejected drops, newest first", File: "file", Reason: "reason", When: "when",
		FailedTasks: "failed tasks, newest first", Batch: "batch", Class: "class", Attempts: "attempts", More: "… and %d more",
		AccountHeld: "account held by a usage limit:", Until: "until",
		AccountSignedOut: "account signed out (held until an operator signs in):", AccountChallenge: "account held by a challenge (an operator must clear it):",
		AccountPaused: "account paused by an operator (until resumed):",
		Screenshot:    "screenshot",
		Sessions:      "sessions (one task each)", Account: "account", Site: "site", State: "state", Lease: "lease held by",
		Finished: "finished",
		Foreign:  "foreign files (not written by a daemon of this installation: ignored, never deleted)", Kind: "kind",
	}
	labelsZH = pageLabels{
		Lang: "zh-CN", Title: "spoolgate 状态", Spool: "队列目录", Refreshes: "每 %d 秒自动刷新",
		Lane: "通道", Concurrency: "并发", Runner: "占用者", Paused: "已暂停", ETA: "预计完成",
		Pending: "等待中", Running: "运行中", Success: "成功", Failed: "失败", Canceled: "已取消",
		Rejected: "被拒收", Incoming: "待接收",
		Task: "运行中的任务", TaskCol: "任务", Model: "模型", Attempt: "第几次尝试", Elapsed: "已用时", Heartbeat: "心跳",
		Owner: "执行者", Ago: "前", Stale: "（已失联）", Held: "受阻：", Batches: "批次", NoBatches: "暂无批次",
		RejectedDrops: "被拒收的文件（最新在前）", File: "文件", Reason: "原因", When: "时间",
		FailedTasks: "失败的任务（最新在前）", Batch: "批次", Class: "错误类别", Attempts: "尝试次数", More: "…… 另有 %d 个",
		AccountHeld: "账号因用量限制暂停：", Until: "直到",
		AccountSignedOut: "账号已退出登录（暂停，等操作员重新登录）：", AccountChallenge: "账号遇到人机验证（暂停，等操作员处理）：",
		AccountPaused: "账号已由操作员暂停（恢复前不接任务）：",
		Screenshot:    "截图",
		Sessions:      "会话（每个一次只跑一个任务）", Account: "账号", Site: "站点", State: "状态", Lease: "租约持有者",
		Finished: "已完成",
		Foreign:  "外来文件（不是本安装的守护进程写的：已忽略，不会删除）", Kind: "类别",
	}
)

// labelsFor picks the page's language from the request's Accept-Language:
// the first language the browser prefers that the page speaks, by base
// language: every zh (zh, zh-CN, zh-TW, zh-HK, zh-Hant, zh-Hans...) gets
// the Chinese page (simplified Chinese text, for traditional too), en
// English; English for anything else, a missing or a malformed header.
// (language.Matcher judged zh-HK and zh-Hant too far from zh-Hans and
// gave them English.)
func labelsFor(r *http.Request) pageLabels {
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil {
		return labelsEN
	}
	for _, t := range tags { // most preferred first
		b, conf := t.Base()
		if conf == language.No {
			continue
		}
		switch b.String() {
		case "zh":
			return labelsZH
		case "en":
			return labelsEN
		}
	}
	return labelsEN
}

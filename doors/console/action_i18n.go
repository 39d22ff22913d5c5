package console

import (
	"fmt"
	"regexp"
	"strings"
)

// actionLabels are the words of the login, the buttons, the forms and
// the audit lines, in the page's language.
type actionLabels struct {
	OnlyPost, CrossOrigin, ReadOnly, NoSession, BadCSRF, BadLogin string
	Login, Logout, User, Password, TokenHint, LoggedInAs          string
	Cancel, Retry, RetryFailed, Priority, Set, Pause, Resume      string
	PauseHost, ResumeHost, Host, Release, Confirm, Back           string
	PauseAccount                                                  string
	Submit, Import, Model, Content, Prompt, Batch, Output, TaskID string
	Preview, Template, TemplateHint, Column, File, Row, Errors    string
	SubmitRows, NoRows, Staged, Submitted, Refused, Audit, ByAt   string
	ForeignLine, TooLarge, Lane, Optional, DefaultModel, Actions  string
	Done, LiveLink, Dups, Open                                    string
	TitleCol, TitleHint                                           string
	FollowUp, ThenModel, Then, ThenHint, KeptFile                 string
	tooMany                                                       string
	Verbs                                                         map[string]string
	Fields                                                        map[string]string
	phrases                                                       [][2]string
}

var (
	actionsEN = actionLabels{
		OnlyPost: "this changes state: POST only", CrossOrigin: "refused: the request did not come from this server's own pages",
		ReadOnly: "read-only: no console users are configured (console.users or console.token)", NoSession: "log in first",
		BadCSRF: "refused: the form's token is missing or not this session's (reload the page)", BadLogin: "wrong user name or password",
		Login: "log in", Logout: "log out", User: "user", Password: "password", TokenHint: "leave the user empty to log in with the shared token",
		LoggedInAs: "logged in as", Cancel: "cancel", Retry: "retry", RetryFailed: "retry the failed tasks", Priority: "priority", Set: "set",
		Pause: "pause", Resume: "resume", PauseHost: "pause on host", ResumeHost: "resume on host", Host: "host", Release: "end the hold", PauseAccount: "pause this account", LiveLink: "sign in from the page",
		Confirm: "confirm", Back: "back",
		Submit: "submit a task", Import: "import a table", Model: "model", Content: "content", Prompt: "prompt", Batch: "batch",
		Output: "output", TaskID: "task id", Preview: "preview", Template: "template",
		TemplateHint: "e.g. Write about {{topic}} for {{channel}}: {{name}} is replaced by the row's cell in the column of that header",
		Column:       "column", File: "CSV or XLSX file", Row: "row", Errors: "rows refused", SubmitRows: "submit %d valid rows as batch %s",
		NoRows: "no valid rows", Staged: "preview of the first rows", Submitted: "submitted %d tasks", Refused: "refused",
		Audit: "actions", ByAt: "%s by %s at %s", ForeignLine: "foreign line (not written by a daemon of this installation): ",
		TooLarge: "the upload is too large (at most %d MiB)", Lane: "lane", Optional: "optional", DefaultModel: "model (when no column names one)",
		TitleCol: "name", TitleHint: "names each row's task in the lists; left empty, a template's rows are named by the cells it fills in",
		FollowUp: "follow-up: a second message in the same chat", ThenModel: "then: the answer to a task on model", Then: "then: its content",
		ThenHint: "is the row's last answer (empty: the answer alone)", KeptFile: "kept: %s (preview again without a file to use it; choose another to replace it)",
		Actions: "actions", Done: "done: ", tooMany: "too many failed logins: try again in %d s",
		Open: "open it",
		Dups: "%d rows were submitted before (their task ids exist already; they will not run again): rows %s",
		Verbs: map[string]string{"cancel": "cancel requested", "retry": "retried", "priority": "priority set", "pause": "paused",
			"resume": "resumed", "release": "hold ended", "pause-account": "account paused", "submit": "submitted", "import": "imported", "login": "logged in", "logout": "logged out",
			"live-open": "opened the live view", "live-close": "live view ended"},
		Fields: map[string]string{"model": "model", "content": "content", "prompt": "prompt", "batch": "batch", "output": "output",
			"priority": "priority", "taskId": "task id", "lane": "lane", "host": "host", "account": "account"},
	}
	actionsZH = actionLabels{
		OnlyPost: "此操作会改变状态：只接受 POST", CrossOrigin: "已拒绝：请求不是来自本服务器自己的页面",
		ReadOnly: "只读：配置中没有控制台用户（console.users 或 console.token）", NoSession: "请先登录",
		BadCSRF: "已拒绝：表单令牌缺失或不属于本会话（请刷新页面）", BadLogin: "用户名或密码错误",
		Login: "登录", Logout: "退出登录", User: "用户名", Password: "密码", TokenHint: "用户名留空即用共享令牌登录",
		LoggedInAs: "已登录：", Cancel: "取消", Retry: "重试", RetryFailed: "重试失败的任务", Priority: "优先级", Set: "设置",
		Pause: "暂停", Resume: "恢复", PauseHost: "暂停某台主机", ResumeHost: "恢复某台主机", Host: "主机", Release: "解除限制", PauseAccount: "暂停此账号", LiveLink: "在网页上登录",
		Confirm: "确认", Back: "返回",
		Submit: "提交任务", Import: "导入表格", Model: "模型", Content: "内容", Prompt: "提示词", Batch: "批次",
		Output: "输出文件", TaskID: "任务 ID", Preview: "预览", Template: "模板",
		TemplateHint: "例如 为{{渠道}}写一篇关于{{主题}}的稿子：{{列名}} 会换成该行在这一列的内容",
		Column:       "列", File: "CSV 或 XLSX 文件", Row: "行", Errors: "被拒绝的行", SubmitRows: "把 %d 行有效数据提交为批次 %s",
		NoRows: "没有有效的行", Staged: "前几行预览", Submitted: "已提交 %d 个任务", Refused: "已拒绝",
		Audit: "操作记录", ByAt: "%[2]s 于 %[3]s %[1]s", ForeignLine: "外来记录（不是本安装的守护进程写的）：",
		TooLarge: "上传的文件太大（最多 %d MiB）", Lane: "通道", Optional: "可选", DefaultModel: "模型（没有模型列时使用）",
		TitleCol: "名称", TitleHint: "列表中每行任务显示的名称；留空时，用模板填入的单元格作为名称",
		FollowUp: "追问：同一对话里的第二条消息", ThenModel: "然后：把回答交给模型", Then: "然后：其内容",
		ThenHint: "代表该行最后一个回答（留空：只发回答本身）", KeptFile: "已保留：%s（不选文件直接预览即沿用；重新选择文件可替换）",
		Actions: "操作", Done: "完成：", tooMany: "登录失败次数过多：请 %d 秒后再试",
		Open: "打开查看",
		Dups: "%d 行之前已提交过（任务 ID 已存在，不会再运行一次）：第 %s 行",
		Verbs: map[string]string{"cancel": "取消", "retry": "重试", "priority": "修改优先级", "pause": "暂停", "resume": "恢复",
			"release": "解除限制", "pause-account": "暂停账号", "submit": "提交", "import": "导入", "login": "登录", "logout": "退出登录",
			"live-open": "打开实时画面", "live-close": "实时画面结束"},
		Fields: map[string]string{"model": "模型", "content": "内容", "prompt": "提示词", "batch": "批次", "output": "输出文件",
			"priority": "优先级", "taskId": "任务 ID", "lane": "通道", "host": "主机", "account": "账号"},
		phrases: [][2]string{{"missing or empty", "不能为空"}, {"missing", "缺失"}, {"is not in the config", "不在配置中"},
			{"already exists in", "已存在（重复提交，不会再运行一次）："}, {"is not high, normal or low", "只能是 high、normal 或 low"},
			{"is already waiting in", "已在等待中（重复提交）："}, {"column", "列"}, {"is empty", "为空"}},
	}
)

func (p pageLabels) actions() actionLabels {
	if p.Lang == labelsZH.Lang {
		return actionsZH
	}
	return actionsEN
}

// TooMany says how long to wait after too many failed logins.
func (a actionLabels) TooMany(secs int) string { return fmt.Sprintf(a.tooMany, max(secs, 1)) }

// bulkDetail is a bulk action's audit detail ("bulk: 5 of 5"); detailWord
// the words other details are made of: the folder a canceled task was in,
// a level, "host" and "account" before a name.
var (
	bulkDetail    = regexp.MustCompile(`bulk: (\d+) of (\d+)`)
	countDetail   = regexp.MustCompile(`^(\d+) of (\d+)$`)
	importDetail  = regexp.MustCompile(`^(\d+) rows, (\d+) refused$`)
	detailWord    = regexp.MustCompile(`^(pending|running|high|normal|low)$|\b(host|account) `)
	auditDetailZH = map[string]string{"pending": "等待中", "running": "运行中", "high": "高", "normal": "普通", "low": "低", "host ": "主机 ", "account ": "账号 "}
)

// detailWords is an audit line's detail in the page's words: the bulk
// count and the words above translated, names (lanes, hosts, accounts)
// as recorded.
func (a actionLabels) detailWords(d string) string {
	if a.lang() != labelsZH.Lang {
		return d
	}
	d = bulkDetail.ReplaceAllString(d, "批量：$1 / $2")
	d = countDetail.ReplaceAllString(d, "$1 / $2")
	d = importDetail.ReplaceAllString(d, "$1 行，拒收 $2 行")
	parts := strings.Split(d, ", ")
	for i, p := range parts {
		parts[i] = detailWord.ReplaceAllStringFunc(p, func(w string) string { return auditDetailZH[w] })
	}
	return strings.Join(parts, "，")
}

// Verb is an audit action in the page's words.
func (a actionLabels) Verb(action string) string {
	if v, ok := a.Verbs[action]; ok {
		return v
	}
	return action
}

// Problem is a refusal's message in the page's language: the field's
// name and the known phrases translated, the rest (names, values) as the
// validator wrote it.
func (a actionLabels) Problem(field, msg string) string {
	if _, rest, ok := strings.Cut(msg, field+": "); ok && field != "" {
		msg = rest
	}
	for _, p := range a.phrases {
		msg = strings.ReplaceAll(msg, p[0], p[1])
	}
	if f, ok := a.Fields[field]; ok {
		return f + ": " + msg
	}
	return msg
}

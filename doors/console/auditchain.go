package console

import (
	"fmt"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
)

// The audit trail's chain on the pages: a break (a line deleted,
// duplicated, moved or edited, see spool/audit.go) is shown at its place
// among the actions, a line sealed before the chain is marked as such,
// and each action says which door it came through.

var (
	breakWords = map[string]string{
		"en":    "the audit trail breaks here (%s, near %s): %s; run spoolgate audit verify",
		"zh-CN": "操作记录在此处断开（%s，约 %s）：%s；请运行 spoolgate audit verify",
	}
	beforeChainWords = map[string]string{"en": " [before the chain]", "zh-CN": " [链之前]"}
	doorWords        = map[string]map[string]string{
		"en":    {spool.DoorCLI: " [command line]", spool.DoorToken: " [front door token]", spool.DoorLive: " [live view]"},
		"zh-CN": {spool.DoorCLI: " [命令行]", spool.DoorToken: " [前门令牌]", spool.DoorLive: " [实时画面]"},
	}
)

func wordsOf[T any](m map[string]T, lang string) T {
	if v, ok := m[lang]; ok {
		return v
	}
	return m["en"]
}

// breakView is a break of the chain as a page shows it.
func breakView(lang string, e spool.AuditEntry, when string) auditView {
	return auditView{Text: fmt.Sprintf(wordsOf(breakWords, lang), safetext.Line(e.File), when, safetext.Line(e.Break)), Break: true}
}

// chainNote is what follows an action's words: the door it came through
// (none for the console's own), and "before the chain" for a line sealed
// by a spoolgate from before the chain.
func chainNote(lang string, e spool.AuditEntry) string {
	s := wordsOf(doorWords, lang)[e.Door]
	if e.Unchained && e.Foreign == "" {
		s += wordsOf(beforeChainWords, lang)
	}
	return s
}

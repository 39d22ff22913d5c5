package frontdoor

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A multi-turn request (earlier user and assistant messages before the
// last user message) continues a conversation spoolgate had: when its
// assistant messages are, in order, the results of done tasks of the same
// model submitted by the same token (each a follow-up of the one before),
// the request becomes a follow-up of the last of them: on a web model,
// the next message of that chat, on the account that ran it. Otherwise a
// web model whose config has followUpFallback: transcript gets a new chat
// whose first message carries the turns; anything else is refused.

// continueTurns makes t, the task of multi-turn request ct, a follow-up
// of the done task its turns came from, or a transcript chat, or says why
// it cannot be either.
func (d *Door) continueTurns(tk *token, ct chatTask, t *taskfile.Task) *apiError {
	m, ok := d.cfg.Model(ct.Model)
	if !ok {
		return nil // the caller answers model_not_found
	}
	if id := d.turnsFrom(tk, m, ct.Turns); id != "" {
		t.FollowUp = id
		return nil
	}
	if m.Kind == taskfile.KindWeb && m.FollowUpFallback == config.FollowUpTranscript {
		t.Content = taskfile.TranscriptText(ct.Turns, ct.Content)
		return nil
	}
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "messages", Code: "conversation_not_found",
		Msg: fmt.Sprintf("the earlier turns are not a conversation this token had with %q (each assistant message must be, word for word, the answer of a finished task of this model and token, in order), and its config has no followUpFallback: transcript: send one user message, or the conversation as it was answered", ct.Model)}
}

// turnsFrom is the id of the newest done task of model m and token tk
// whose conversation is exactly turns (its thread's turns, then its own
// content and result), or "". It reads the lane's done/ records of the
// token's tasks (their ids start with door-TOKEN-), as a daemon reads
// them: a planted record lends no conversation.
func (d *Door) turnsFrom(tk *token, m *config.ModelConfig, turns []taskfile.Turn) string {
	names, err := fsx.ReadDirNames(d.st.Layout.Lane(m.Kind, taskfile.DirDone))
	if err != nil {
		return ""
	}
	last := turns[len(turns)-1]
	best, bestAt := "", ""
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".yaml")
		if !ok || !strings.HasPrefix(id, "door-"+tk.name+"-") {
			continue
		}
		p, err := d.st.Read(m.Kind, taskfile.DirDone, id)
		if err != nil || p.State != taskfile.StateSuccess || p.DoorToken != tk.name || p.Model != m.Name ||
			p.Result != last.Result || p.Content != last.Content || !sameTurns(taskfile.ThreadOf(p).Turns, turns) {
			continue
		}
		if at := p.FinishedAt.UTC().Format("2006-01-02T15:04:05.000000000"); at > bestAt {
			best, bestAt = id, at
		}
	}
	return best
}

// sameTurns reports whether a task's turns are the request's, content and
// result word for word (the request's turns carry no task ids).
func sameTurns(have, want []taskfile.Turn) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range have {
		if have[i].Content != want[i].Content || have[i].Result != want[i].Result {
			return false
		}
	}
	return true
}

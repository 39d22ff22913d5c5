package frontdoor

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

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
// content and result), or "". It looks at the token's records in the
// lane's done/ (their ids start with door-TOKEN-), each read once, as a
// daemon reads it (a planted record lends no conversation), and known
// again by its size and time while it stays the same.
func (d *Door) turnsFrom(tk *token, m *config.ModelConfig, turns []taskfile.Turn) string {
	dir := d.st.Layout.Lane(m.Kind, taskfile.DirDone)
	names, err := fsx.ReadDirNames(dir)
	if err != nil {
		return ""
	}
	want := conversationKey(turns)
	d.turns.mu.Lock()
	defer d.turns.mu.Unlock()
	if d.turns.m == nil {
		d.turns.m = map[string]turnsEntry{}
	}
	seen := map[string]bool{}
	best, bestAt := "", time.Time{}
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".yaml")
		if !ok || !strings.HasPrefix(id, "door-"+tk.name+"-") {
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		key := string(m.Kind) + "/" + id
		seen[key] = true
		e, ok := d.turns.m[key]
		if !ok || e.size != fi.Size() || !e.mod.Equal(fi.ModTime()) {
			e = turnsEntry{size: fi.Size(), mod: fi.ModTime()}
			if p, err := d.st.Read(m.Kind, taskfile.DirDone, id); err == nil && p.State == taskfile.StateSuccess {
				e.token, e.model, e.at = p.DoorToken, p.Model, p.FinishedAt
				e.key = conversationKey(taskfile.ThreadOf(p).Turns)
			}
			d.turns.m[key] = e
		}
		if e.token == tk.name && e.model == m.Name && e.key == want && (best == "" || e.at.After(bestAt)) {
			best, bestAt = id, e.at
		}
	}
	for key := range d.turns.m {
		if strings.HasPrefix(key, string(m.Kind)+"/door-"+tk.name+"-") && !seen[key] {
			delete(d.turns.m, key) // gone from done/ (retention, a retry)
		}
	}
	return best
}

// turnsCache is what turnsFrom knows of each record it read: the file's
// size and time, and the record's token, model, end and conversation.
type turnsCache struct {
	mu sync.Mutex
	m  map[string]turnsEntry // by LANE/ID
}

type turnsEntry struct {
	size         int64
	mod, at      time.Time
	token, model string
	key          [sha256.Size]byte
}

// conversationKey is the SHA-256 of turns' contents and results, each
// length-prefixed: two conversations have one key only if they are the
// same word for word (the turns' task ids do not count).
func conversationKey(turns []taskfile.Turn) [sha256.Size]byte {
	h := sha256.New()
	for _, t := range turns {
		for _, s := range []string{t.Content, t.Result} {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

package frontdoor

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A token owns the tasks it submits (Task.DoorToken, which only a record
// this installation sealed carries): it reads, waits on, cancels and
// retries those only, unless its entry says read: all or act: all. Every
// other task answers as a task that does not exist would, so a token
// learns nothing of another's tasks: not that one exists, nor what it
// holds. Its task ids are its own too: an Idempotency-Key's and a given
// taskId's are door-TOKEN-..., so one token's submit never meets
// another's task.

// ownPrefix begins the ids of tk's tasks.
func ownPrefix(tk *token) string { return "door-" + tk.name + "-" }

// ownID is the id of the task a submit of tk names id: id itself if it
// begins with tk's prefix (an id the door answered with), else id after
// the prefix.
func ownID(tk *token, id string) string {
	if strings.HasPrefix(id, ownPrefix(tk)) {
		return id
	}
	return ownPrefix(tk) + id
}

// sees reports whether tk may read the task at w: its own, or any with
// read: all; and, either way, of a model tk may use.
func (tk *token) sees(w where) bool {
	if w.task != nil && !tk.cfg.Allows(w.task.Model) {
		return false
	}
	return w.owner == tk.name || tk.cfg.ReadsAll()
}

// acts reports whether tk may cancel and retry the task at w (which it
// sees): its own, or any with act: all.
func (tk *token) acts(w where) bool { return w.owner == tk.name || tk.cfg.ActsAll() }

// grant is a task field a token sets only when its entry's allow: names it.
type grant struct {
	name string // in allow: and in the request
	set  func(in taskIn) bool
}

// grants are the fields beyond model, content, prompt and batch: a high
// priority runs ahead of colleagues' tasks, an output writes into the
// shared output/, attachments read the share's files into the answer.
var grants = []grant{
	{"priority", func(in taskIn) bool {
		return in.Priority != "" && taskfile.Priority(in.Priority) != taskfile.PriorityNormal
	}},
	{"output", func(in taskIn) bool { return in.Output != "" }},
	{"attachments", func(in taskIn) bool { return len(in.Attachments) > 0 }},
}

// checkGrants refuses, with 403 naming it, the first field of in that tk
// sets without the grant.
func checkGrants(tk *token, in taskIn, param string) *apiError {
	for _, g := range grants {
		if g.set(in) && !tk.cfg.Grants(g.name) {
			return &apiError{Status: http.StatusForbidden, Type: "permission_error", Param: param + "." + g.name, Code: "field_not_allowed",
				Msg: fmt.Sprintf("token %s may not set %s: its entry in tokens: must grant it (allow: [%s])", tk.name, g.name, g.name)}
		}
	}
	return nil
}

// noTask is the answer for a task that does not exist, and for one the
// token may not see: the same status and words.
func noTask(k taskfile.Kind, id string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "not_found", Msg: fmt.Sprintf("no task %s/%s", k, id)}
}

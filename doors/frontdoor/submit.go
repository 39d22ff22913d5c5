package frontdoor

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// keyedID is the taskId an idempotency key names for a token: the same
// key of the same token always names the same task, so a retried request
// finds the task the first one made, across restarts, with no index to
// keep. It is keyed with the token's hash (in the config, not on the
// share), so no one who sees only the spool can know a key's task ahead
// and plant it.
func keyedID(tk *token, key string) string {
	h := sha256.New()
	h.Write([]byte(tk.hash))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return "door-" + tk.name + "-" + hex.EncodeToString(h.Sum(nil))[:24]
}

// newID is the taskId of a request without a key: unique.
func newID(tk *token) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "door-" + tk.name + "-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// submitted is a task the door made or found.
type submitted struct {
	lane   taskfile.Kind
	id     string
	joined bool // it existed: this request joins it
	at     where
}

// check validates t exactly as intake will (config.ResolveLane,
// config.Validate, the output path, the attachments) and returns its lane.
func (d *Door) check(t *taskfile.Task) (taskfile.Kind, *apiError) {
	t.ResetForIntake()
	lane, rej := config.ResolveLane(d.cfg, t, "")
	if rej == nil {
		rej = config.Validate(d.cfg, t, lane)
	}
	if rej == nil {
		rej = d.st.CheckOutputShape(t, lane)
	}
	if rej == nil {
		rej = d.st.CheckAttachments(t, "")
		t.AttachmentsChecked = nil // intake records them again
	}
	if rej != nil {
		return "", badRequest("", rej.Msg)
	}
	return lane, nil
}

// checkOutputFree refuses, with 409 naming the file, a new task whose
// output: is a file already there (spoolgate never replaces one); the
// task the taskId names already, if any, is joined instead (submit).
func (d *Door) checkOutputFree(lane taskfile.Kind, t *taskfile.Task) *apiError {
	if t.Output == "" {
		return nil
	}
	if _, err := d.look(lane, t.TaskID); !errors.Is(err, errNoTask) {
		return nil
	}
	if rej := d.st.OutputTaken(t); rej != nil {
		return &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Param: "output", Code: "output_exists", Msg: rej.Msg}
	}
	return nil
}

// errConflict: the taskId or key names a task made from another request.
var errConflict = errors.New("idempotency key or taskId reused with a different request")

// submit drops t (checked, of lane) into lane's incoming/ through the
// Store, unless its taskId already names a task: then it returns that
// task, joined, if the submitter's fields are the same, else a 422. A lane
// whose queue is over door.maxQueue refuses a new task with 429.
func (d *Door) submit(lane taskfile.Kind, t *taskfile.Task) (submitted, *apiError) {
	mu := d.idLock(lane, t.TaskID)
	mu.Lock()
	defer mu.Unlock()
	s := submitted{lane: lane, id: t.TaskID}
	if w, err := d.look(lane, t.TaskID); err == nil {
		return d.join(s, w, t)
	} else if !errors.Is(err, errNoTask) {
		return s, internalError(err.Error())
	}
	if n := d.queued(lane); n >= d.cfg.Door.MaxQueue {
		return s, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "queue_full",
			Msg: fmt.Sprintf("the %s lane has %d tasks waiting (door.maxQueue %d): try again later", lane, n, d.cfg.Door.MaxQueue)}
	}
	// Sealed: the token that submits it (t.DoorToken) is kept through
	// intake only from a drop this installation wrote (spool/owner.go).
	data, err := d.st.EncodeTask(lane, t)
	if err != nil {
		return s, badRequest("", err.Error())
	}
	if _, err := d.st.Submit(d.st.Layout.Lane(lane, taskfile.DirIncoming), t.TaskID, data); err != nil {
		if errors.Is(err, os.ErrExist) {
			if w, err := d.look(lane, t.TaskID); err == nil {
				return d.join(s, w, t)
			}
		}
		d.log.Error("submit", "lane", lane, "task", t.TaskID, "err", err)
		return s, internalError(fmt.Sprintf("cannot drop the task: %v", err))
	}
	s.at = where{dir: taskfile.DirIncoming}
	d.log.Debug("task submitted", "lane", lane, "task", t.TaskID, "batch", t.Batch)
	return s, nil
}

// join returns the existing task w if the same token made it from the
// same fields. Another's there (only a file someone dropped on the share
// under the token's own id can be: ids are per token) is refused.
func (d *Door) join(s submitted, w where, t *taskfile.Task) (submitted, *apiError) {
	s.joined, s.at = true, w
	if w.owner != t.DoorToken {
		return s, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "task_exists",
			Msg: fmt.Sprintf("task %s/%s exists and token %s did not submit it (a file dropped on the share under its id?): give another taskId or key", s.lane, s.id, t.DoorToken)}
	}
	if w.task != nil {
		e := w.task
		if e.Model != t.Model || e.Prompt != t.Prompt || e.Content != t.Content || e.Output != t.Output || !slices.Equal(e.Attachments, t.Attachments) {
			return s, &apiError{Status: http.StatusUnprocessableEntity, Type: "invalid_request_error", Code: "idempotency_conflict",
				Msg: fmt.Sprintf("%v: task %s/%s has another model, prompt, content or output", errConflict, s.lane, s.id)}
		}
	}
	return s, nil
}

// idLock is the lock of one taskId's submits in this process (striped:
// two ids may share one, which only serialises them).
func (d *Door) idLock(k taskfile.Kind, id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(string(k) + "/" + id))
	return &d.idLocks[h.Sum32()%uint32(len(d.idLocks))]
}

// retryAfter is the Retry-After of a 429 for a full queue, in seconds.
var retryAfter = strconv.Itoa(5)

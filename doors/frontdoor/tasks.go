package frontdoor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// taskIn is one task of POST /api/v1/tasks: the fields of a task file
// that its submitter writes.
type taskIn struct {
	TaskID   string `json:"taskId"`
	Lane     string `json:"lane"`
	Model    string `json:"model"`
	Batch    string `json:"batch"`
	Priority string `json:"priority"`
	Output   string `json:"output"`
	Prompt   string `json:"prompt"`
	Content  string `json:"content"`
	// Attachments name files under the spool's files/ or a root of
	// attachments.roots (the door has no task folder).
	Attachments []string `json:"attachments"`
}

// taskOut is a task as the API shows it: its row of `spoolgate results`,
// and whether a submit made it or found it.
type taskOut struct {
	report.Row
	Joined bool `json:"joined,omitempty"`
}

// submitTasks is POST /api/v1/tasks: one task object, or {"tasks": [...]}.
// Every task is checked before any is dropped (as `spoolgate submit`); an
// Idempotency-Key names their taskIds (KEY, then KEY/1, KEY/2...), and a
// taskId that names a task made from the same fields returns it again.
func (d *Door) submitTasks(w http.ResponseWriter, r *http.Request) {
	tk := tokenOf(r.Context())
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, bodyError(err))
		return
	}
	ins, aerr := parseTasks(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if !d.charge(w, tk, len(ins)) {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	type ready struct {
		lane taskfile.Kind
		t    *taskfile.Task
	}
	var all []ready
	seen := map[string]int{}
	for i, in := range ins {
		param := fmt.Sprintf("tasks[%d]", i)
		if aerr := checkGrants(tk, in, param); aerr != nil {
			writeError(w, aerr)
			return
		}
		t := &taskfile.Task{TaskID: in.TaskID, ModelKind: taskfile.Kind(in.Lane), Model: in.Model, Batch: in.Batch,
			Priority: taskfile.Priority(in.Priority), Output: in.Output, Prompt: in.Prompt, Content: in.Content, Attachments: in.Attachments}
		if in.Lane != "" && !t.ModelKind.Valid() {
			writeError(w, badRequest(param+".lane", fmt.Sprintf("%q: want web or api", in.Lane)))
			return
		}
		if t.Batch == "" {
			t.Batch = batchOf(r, tk)
		}
		switch {
		case t.TaskID != "":
			t.TaskID = ownID(tk, t.TaskID) // the token's own name for it (rights.go)
		case key != "" && i == 0:
			t.TaskID = keyedID(tk, key)
		case key != "":
			t.TaskID = keyedID(tk, key+"/"+strconv.Itoa(i))
		default:
			t.TaskID = newID(tk)
		}
		if t.Model != "" && !tk.cfg.Allows(t.Model) {
			writeError(w, &apiError{Status: http.StatusForbidden, Type: "permission_error", Param: param + ".model", Code: "model_not_allowed",
				Msg: fmt.Sprintf("token %s may not use the model %q", tk.name, t.Model)})
			return
		}
		lane, aerr := d.check(t)
		if aerr == nil {
			aerr = d.checkOutputFree(lane, t)
		}
		if aerr != nil {
			if aerr.Param == "" {
				aerr.Param = param
			} else {
				aerr.Param = param + "." + aerr.Param
			}
			writeError(w, aerr)
			return
		}
		if j, dup := seen[string(lane)+"/"+t.TaskID]; dup {
			writeError(w, badRequest(param+".taskId", fmt.Sprintf("taskId %q is also given by tasks[%d]", t.TaskID, j)))
			return
		}
		seen[string(lane)+"/"+t.TaskID] = i
		t.DoorToken = tk.name
		all = append(all, ready{lane, t})
	}
	out := make([]taskOut, 0, len(all))
	status := http.StatusOK
	for _, rd := range all {
		s, aerr := d.submit(rd.lane, rd.t)
		if aerr != nil {
			if aerr.Status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", retryAfter)
			}
			if len(out) > 0 {
				aerr.Msg += fmt.Sprintf(" (the %d tasks before it were submitted)", len(out))
			}
			writeError(w, aerr)
			return
		}
		if !s.joined {
			status = http.StatusCreated
		}
		out = append(out, d.view(rd.lane, rd.t.TaskID, s.joined))
	}
	writeJSON(w, status, map[string]any{"tasks": out})
}

// parseTasks reads one task object or {"tasks": [...]}.
func parseTasks(body []byte) ([]taskIn, *apiError) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, badRequest("", "the body is not a JSON object: a task, or {\"tasks\": [...]}")
	}
	strict := func(data []byte, v any) error {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	if raw, ok := probe["tasks"]; ok {
		var list []taskIn
		if err := strict(raw, &list); err != nil {
			return nil, badRequest("tasks", err.Error())
		}
		if len(list) == 0 || len(list) > 1000 {
			return nil, badRequest("tasks", "want 1 to 1000 tasks")
		}
		if len(probe) > 1 {
			return nil, badRequest("", "beside tasks, no other key")
		}
		return list, nil
	}
	var one taskIn
	if err := strict(body, &one); err != nil {
		return nil, badRequest("", err.Error())
	}
	return []taskIn{one}, nil
}

// view is task id of lane k as the API shows it.
func (d *Door) view(k taskfile.Kind, id string, joined bool) taskOut {
	w, err := d.look(k, id)
	if err != nil || w.task == nil {
		st := "incoming"
		if err != nil {
			st = "unknown"
		}
		return taskOut{Row: report.Row{TaskID: id, Lane: k, State: st}, Joined: joined}
	}
	row := report.TaskRow(d.st.Layout, k, w.dir, w.task)
	if w.reject != "" {
		row.State, row.ErrorClass, row.Error = string(taskfile.StateFailed), string(taskfile.ClassInvalid), w.reject
	}
	return taskOut{Row: row, Joined: joined}
}

// taskRef reads {lane}/{id} of the path and checks the token may see it.
func (d *Door) taskRef(w http.ResponseWriter, r *http.Request) (taskfile.Kind, string, where, bool) {
	k := taskfile.Kind(r.PathValue("lane"))
	id := r.PathValue("id")
	if !k.Valid() {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "lane", Code: "not_found", Msg: fmt.Sprintf("%q is not a lane (web or api)", k)})
		return "", "", where{}, false
	}
	if !taskfile.ValidTaskID(id) {
		writeError(w, badRequest("id", "not a taskId: "+taskfile.TaskIDProblem(id)))
		return "", "", where{}, false
	}
	at, err := d.look(k, id)
	if err == nil && !tokenOf(r.Context()).sees(at) {
		err = errNoTask // another token's task, or one of a model the token may not use: as if there were none
	}
	if errors.Is(err, errNoTask) {
		writeError(w, noTask(k, id))
		return "", "", where{}, false
	}
	if err != nil {
		writeError(w, internalError(err.Error()))
		return "", "", where{}, false
	}
	return k, id, at, true
}

// actRef is taskRef for a request that changes the task: one the token
// sees but did not submit, without act: all, is refused with 403.
func (d *Door) actRef(w http.ResponseWriter, r *http.Request) (taskfile.Kind, string, where, bool) {
	k, id, at, ok := d.taskRef(w, r)
	if ok && !tokenOf(r.Context()).acts(at) {
		tk := tokenOf(r.Context())
		writeError(w, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "not_own_task",
			Msg: fmt.Sprintf("token %s did not submit task %s/%s: only its own, unless its entry in tokens: says act: all", tk.name, k, id)})
		return "", "", where{}, false
	}
	return k, id, at, ok
}

// getTask is GET /api/v1/tasks/{lane}/{id}.
func (d *Door) getTask(w http.ResponseWriter, r *http.Request) {
	if k, id, _, ok := d.taskRef(w, r); ok {
		writeJSON(w, http.StatusOK, d.view(k, id, false))
	}
}

// waitTask is GET /api/v1/tasks/{lane}/{id}/wait?timeout=30s: the task
// once it is final, or as it is when the timeout (at most door.maxWait)
// passes.
func (d *Door) waitTask(w http.ResponseWriter, r *http.Request) {
	k, id, _, ok := d.taskRef(w, r)
	if !ok {
		return
	}
	limit := d.cfg.Door.MaxWait.D()
	if v := r.URL.Query().Get("timeout"); v != "" {
		t, err := time.ParseDuration(v)
		if err != nil || t < 0 {
			writeError(w, badRequest("timeout", fmt.Sprintf("%q is not a duration such as 30s", v)))
			return
		}
		limit = min(t, limit)
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	if _, err := d.waitFinal(r.Context(), k, id, time.Now().Add(limit), 0, nil); err != nil {
		d.answerErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d.view(k, id, false))
}

// cancelTask is POST /api/v1/tasks/{lane}/{id}/cancel, as `spoolgate
// cancel`: a pending task ends at once, a running one at its next
// checkpoint.
func (d *Door) cancelTask(w http.ResponseWriter, r *http.Request) {
	k, id, at, ok := d.actRef(w, r)
	if !ok {
		return
	}
	switch at.dir {
	case taskfile.DirIncoming, taskfile.DirPending, taskfile.DirRunning:
		if err := d.st.RequestCancel(k, id); err != nil {
			writeError(w, internalError(err.Error()))
			return
		}
		d.audit(r, "cancel", k, id)
		writeJSON(w, http.StatusAccepted, d.view(k, id, false))
	default:
		writeError(w, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "task_final",
			Msg: fmt.Sprintf("task %s/%s is already %s: nothing to cancel", k, id, taskfile.FolderState[at.dir])})
	}
}

// retryTask is POST /api/v1/tasks/{lane}/{id}/retry, as `spoolgate
// retry`: a failed or canceled task goes back to incoming/ to run again.
func (d *Door) retryTask(w http.ResponseWriter, r *http.Request) {
	k, id, _, ok := d.actRef(w, r)
	if !ok {
		return
	}
	if _, err := d.st.Retry(k, id); err != nil {
		var re *spool.RetryError
		if errors.As(err, &re) {
			writeError(w, &apiError{Status: http.StatusConflict, Type: "invalid_request_error", Code: "not_retryable", Msg: re.Error()})
			return
		}
		writeError(w, internalError(err.Error()))
		return
	}
	d.audit(r, "retry", k, id)
	d.waits.wake(k, id)
	writeJSON(w, http.StatusAccepted, d.view(k, id, false))
}

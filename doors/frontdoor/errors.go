package frontdoor

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// apiError is an error in OpenAI's shape: {"error": {message, type,
// param, code}}, sent with Status.
type apiError struct {
	Status int
	Type   string
	Code   string
	Param  string
	Msg    string
}

func (e *apiError) Error() string { return e.Msg }

func (e *apiError) body() map[string]any {
	var param, code any
	if e.Param != "" {
		param = e.Param
	}
	if e.Code != "" {
		code = e.Code
	}
	return map[string]any{"error": map[string]any{"message": e.Msg, "type": e.Type, "param": param, "code": code}}
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, e.body())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badRequest(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Msg: msg}
}

// internalError is spoolgate's own fault: the only 500.
func internalError(msg string) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "spoolgate_error", Msg: msg}
}

// bodyError maps a body read's error: over the size limit is 413.
func bodyError(err error) *apiError {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
			Msg: "the request body is over the door's limit (door.maxBody)"}
	}
	return badRequest("", "cannot read the request body: "+err.Error())
}

// failedError maps a task that did not succeed to the answer a client
// gets: its class decides the status. 5xx only where spoolgate itself
// failed (stale, environment), 502 where the model failed it every
// attempt (transient), 4xx where asking again would not help.
func failedError(t *taskfile.Task, state taskfile.State) *apiError {
	msg := "task " + t.TaskID + " " + string(state)
	if t.Error != "" {
		msg += ": " + t.Error
	}
	e := &apiError{Msg: msg, Code: "task_" + string(state)}
	if state == taskfile.StateCanceled {
		e.Status, e.Type = http.StatusGone, "invalid_request_error"
		return e
	}
	if t.ErrorClass != "" {
		e.Code = "task_" + string(t.ErrorClass)
	}
	switch t.ErrorClass {
	case taskfile.ClassInvalid, taskfile.ClassDuplicate:
		e.Status, e.Type = http.StatusBadRequest, "invalid_request_error"
	case taskfile.ClassPermanent:
		e.Status, e.Type = http.StatusUnprocessableEntity, "invalid_request_error"
	case taskfile.ClassSchema: // the model's answers did not match response_format
		e.Status, e.Type = http.StatusUnprocessableEntity, "upstream_error"
	case taskfile.ClassTransient, taskfile.ClassAccount:
		e.Status, e.Type = http.StatusBadGateway, "upstream_error"
	case taskfile.ClassCanceled:
		e.Status, e.Type = http.StatusGone, "invalid_request_error"
	default: // stale, environment, unknown: spoolgate's own
		e.Status, e.Type = http.StatusInternalServerError, "server_error"
	}
	return e
}

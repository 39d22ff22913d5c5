package lanes_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestHooks_And(t *testing.T) {
	var got []string
	rec := func(who string) lanes.Hooks {
		return lanes.Hooks{
			OnAttemptEnd: func(k taskfile.Kind, tk *taskfile.Task, d time.Duration) { got = append(got, who+" end "+tk.TaskID) },
			OnFinal:      func(k taskfile.Kind, tk *taskfile.Task) { got = append(got, who+" final "+tk.TaskID) },
		}
	}
	h := rec("a").And(rec("b")).And(lanes.Hooks{OnHold: func(k taskfile.Kind, r string) { got = append(got, "c hold "+r) }})
	tk := &taskfile.Task{TaskID: "t"}
	h.OnAttemptEnd(taskfile.KindAPI, tk, 0)
	h.OnFinal(taskfile.KindAPI, tk)
	h.OnHold(taskfile.KindWeb, "paused")
	want := []string{"a end t", "b end t", "a final t", "b final t", "c hold paused"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// Every hook of Hooks is chained: a field And forgot stays nil here.
	full := lanes.Hooks{}
	v := reflect.ValueOf(&full).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
	}
	joined := reflect.ValueOf(full.And(full))
	for i := 0; i < joined.NumField(); i++ {
		if joined.Field(i).IsNil() {
			t.Errorf("And drops %s", joined.Type().Field(i).Name)
		}
	}
	if e := (lanes.Hooks{}).And(lanes.Hooks{}); e.OnFinal != nil || e.OnAttemptEnd != nil {
		t.Error("And of empty hooks is not empty")
	}
}

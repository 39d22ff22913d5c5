package frontdoor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// waiters wakes the requests waiting on a task ("lane/id"): each waits on
// the task's current channel, which wake closes and replaces.
type waiters struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func (w *waiters) init() { w.ch = map[string]chan struct{}{} }

// watch returns the channel closed at the task's next change.
func (w *waiters) watch(k taskfile.Kind, id string) <-chan struct{} {
	key := string(k) + "/" + id
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.ch[key]
	if !ok {
		c = make(chan struct{})
		w.ch[key] = c
	}
	return c
}

func (w *waiters) wake(k taskfile.Kind, id string) {
	key := string(k) + "/" + id
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[key]; ok {
		close(c)
		delete(w.ch, key)
	}
}

// forget drops the task's channel once no request waits on it: the next
// watch makes a new one. A waiter that was still on it is woken, looks,
// and watches again.
func (w *waiters) forget(k taskfile.Kind, id string) { w.wake(k, id) }

// pollEvery is how often a waiting request looks at its task without a
// wake-up: a task another daemon on the spool runs wakes no hook here.
const pollEvery = time.Second

// where is a task as the door sees it: its folder and record, or the
// reason of a rejected drop.
type where struct {
	dir    string // incoming, pending, running, done, failed, canceled; "" none
	task   *taskfile.Task
	reject string // a rejected drop's reason (dir failed)
	owner  string // the token that submitted it (Task.DoorToken); "" none
}

func (w where) final() bool {
	return w.dir == taskfile.DirDone || w.dir == taskfile.DirFailed || w.dir == taskfile.DirCanceled
}

// errNoTask: no such task in the lane.
var errNoTask = errors.New("no such task")

// look finds task id of lane k: incoming/ first, then the task folders, so
// a task moving from one to the next is never missed. A task file is read
// through the Store: a record a daemon of this installation did not seal
// comes back without its result (see spool.Store.Read).
func (d *Door) look(k taskfile.Kind, id string) (where, error) {
	if w, ok := d.lookIncoming(k, id); ok {
		return w, nil
	}
	for try := 0; ; try++ {
		dir := d.st.Layout.Locate(k, id)
		if dir == "" {
			if w, ok := d.lookIncoming(k, id); ok {
				return w, nil
			}
			return where{}, errNoTask
		}
		if dir == taskfile.DirFailed && d.st.Layout.IsRejectedDrop(k, dir, id) {
			reason, _ := os.ReadFile(filepath.Join(d.st.Layout.Lane(k, dir), taskfile.ReasonFileName(id)))
			w := where{dir: dir, reject: strings.TrimSpace(string(reason))}
			if t, err := d.st.ReadDrop(k, d.st.Layout.TaskPath(k, dir, id)); err == nil {
				// The drop's bytes are kept, the door's seal with them.
				if t.TaskID == "" {
					t.TaskID = id
				}
				w.task, w.owner = t, t.DoorToken
			}
			return w, nil
		}
		t, err := d.st.Read(k, dir, id)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && try < 3 {
				continue // moved on between Locate and Read
			}
			return where{}, fmt.Errorf("read task %s/%s: %w", k, id, err)
		}
		return where{dir: dir, task: t, owner: t.DoorToken}, nil
	}
}

// lookIncoming reads task id from lane k's incoming/: a drop, the
// submitter's fields only, and its token if the door sealed it (false
// when it is not there, or moved on).
func (d *Door) lookIncoming(k taskfile.Kind, id string) (where, bool) {
	t, err := d.st.ReadDrop(k, d.st.Layout.TaskPath(k, taskfile.DirIncoming, id))
	if errors.Is(err, spool.ErrBadDrop) {
		return where{dir: taskfile.DirIncoming}, true
	}
	if err != nil {
		return where{}, false
	}
	if t.TaskID == "" {
		t.TaskID = id
	}
	return where{dir: taskfile.DirIncoming, task: t, owner: t.DoorToken}, true
}

// waitFinal waits until task id of lane k is final, ctx ends, or until
// (if not zero); tick, if not nil, is called every keepAlive with where
// the task is while it waits.
func (d *Door) waitFinal(ctx context.Context, k taskfile.Kind, id string, until time.Time, keepAlive time.Duration, tick func(where)) (where, error) {
	var deadline <-chan time.Time
	if !until.IsZero() {
		tm := time.NewTimer(time.Until(until))
		defer tm.Stop()
		deadline = tm.C
	}
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	var ka <-chan time.Time
	if tick != nil {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		ka = t.C
	}
	defer d.waits.forget(k, id)
	for {
		woken := d.waits.watch(k, id)
		w, err := d.look(k, id)
		if err != nil || w.final() {
			return w, err
		}
		select {
		case <-woken:
		case <-poll.C:
		case <-ka:
			tick(w)
		case <-deadline:
			return w, nil
		case <-ctx.Done():
			return w, ctx.Err()
		}
	}
}

// position is how many tasks of lane k wait in pending/ from before the
// task's own file was written, plus one: its place in the queue as far as
// submission order goes (priorities and sessions may change it).
func (d *Door) position(k taskfile.Kind, id string) int {
	dir := d.st.Layout.Lane(k, taskfile.DirPending)
	own, err := os.Lstat(d.st.Layout.TaskPath(k, taskfile.DirPending, id))
	if err != nil {
		return 0
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 1
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".yaml") || e.Name() == id+".yaml" {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(own.ModTime()) {
			n++
		}
	}
	return n
}

// queued counts lane k's waiting tasks (pending/ and incoming/).
func (d *Door) queued(k taskfile.Kind) int {
	n := 0
	for _, sub := range []string{taskfile.DirPending, taskfile.DirIncoming} {
		ents, _ := os.ReadDir(d.st.Layout.Lane(k, sub))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".yaml") {
				n++
			}
		}
	}
	return n
}

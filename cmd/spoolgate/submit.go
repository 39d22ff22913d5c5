package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("submit", "validate tasks as the daemon would, then drop them atomically", cmdSubmit)
}

type drop struct {
	src  string // file name, "-" or "flags"
	lane taskfile.Kind
	id   string
	data []byte
}

func cmdSubmit(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("submit", &c)
	laneFlag := fs.String("lane", "", "web or api (default: the model's kind)")
	model := fs.String("model", "", "build a task from flags: the model")
	content := fs.String("content", "", "build a task from flags: the user content")
	batch := fs.String("batch", "", "batch label (with --model/--content)")
	prompt := fs.String("prompt", "", "system prompt (with --model/--content)")
	output := fs.String("output", "", "output path under <spool>/output (with --model/--content)")
	id := fs.String("id", "", "taskId (with --model/--content; default generated)")
	priority := fs.String("priority", "", "high, normal or low (with --model/--content)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if _, err := c.load(); err != nil {
		return err
	}
	lane := taskfile.Kind(*laneFlag)
	if lane != "" && !lane.Valid() {
		return usagef("--lane %q: want web or api", lane)
	}
	st := c.store
	var drops []drop
	if *model != "" || *content != "" {
		if len(files) > 0 {
			return usagef("give files or --model/--content, not both")
		}
		t := &taskfile.Task{TaskID: *id, Model: *model, Content: *content, Batch: *batch, Prompt: *prompt, Output: *output, Priority: taskfile.Priority(*priority)}
		if t.TaskID == "" {
			t.TaskID = newTaskID(*batch)
		}
		data, err := t.Encode()
		if err != nil {
			return err
		}
		d, err := checkDrop(st, "flags", t.TaskID+".yaml", data, lane)
		if err != nil {
			return err
		}
		drops = append(drops, d)
	} else {
		if *priority != "" {
			return usagef("submit: --priority goes with --model/--content; in a file, write priority: high")
		}
		if len(files) == 0 {
			return usagef("submit: give FILE..., - for stdin, or --model and --content")
		}
		for _, f := range files {
			var data []byte
			name := filepath.Base(f)
			if f == "-" {
				data, err = io.ReadAll(io.LimitReader(env.Stdin, taskfile.MaxTaskSize+1))
				name = newTaskID("stdin") + ".yaml"
			} else {
				data, _, err = fsx.ReadRegular(f, taskfile.MaxTaskSize)
			}
			if err != nil {
				return usagef("%s: %v", f, err)
			}
			d, err := checkDrop(st, f, name, data, lane)
			if err != nil {
				return err
			}
			drops = append(drops, d)
		}
	}
	seen := map[string]string{}
	for _, d := range drops {
		key := string(d.lane) + "/" + d.id
		if prev, ok := seen[key]; ok {
			return usagef("%s: taskId %q is also given by %s", d.src, d.id, prev)
		}
		seen[key] = d.src
	}
	// All valid: now drop them, each written under a temp name and moved in.
	if err := st.Layout.Create(); err != nil {
		return err
	}
	for _, d := range drops {
		if _, err := st.Submit(st.Layout.Lane(d.lane, taskfile.DirIncoming), d.id, d.data); err != nil {
			if errors.Is(err, os.ErrExist) {
				return usagef("%s: %v", d.src, err)
			}
			return fmt.Errorf("%s: %w", d.src, err)
		}
		fmt.Fprintln(env.Stdout, safetext.Line(d.id))
	}
	return nil
}

// checkDrop validates one task exactly as intake will.
func checkDrop(st *spool.Store, src, name string, data []byte, lane taskfile.Kind) (drop, error) {
	t, err := taskfile.DecodeTask(data)
	if err != nil {
		return drop{}, usagef("%s: %v", src, err)
	}
	t.ResetForIntake()
	if t.TaskID == "" {
		t.TaskID = taskfile.TrimTaskExt(name)
	}
	resolved, rej := config.ResolveLane(st.Cfg, t, lane)
	if rej == nil {
		rej = config.Validate(st.Cfg, t, resolved)
	}
	if rej != nil {
		return drop{}, usagef("%s: %s", src, rej.Msg)
	}
	if where := st.Layout.Locate(resolved, t.TaskID); where != "" {
		hint := ""
		if where == taskfile.DirFailed || where == taskfile.DirCanceled {
			hint = fmt.Sprintf(": run `spoolgate retry %s/%s` to run it again", resolved, t.TaskID)
		}
		return drop{}, usagef("%s: taskId %q already exists in %s/%s/%s", src, t.TaskID, resolved, where, hint)
	}
	// The file keeps its bytes; its name carries the taskId when the file
	// does not, so intake derives the same id.
	return drop{src: src, lane: resolved, id: t.TaskID, data: data}, nil
}

// newTaskID makes an id for a task built from flags or stdin.
func newTaskID(prefix string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	p := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, prefix)
	if p == "" || !taskfile.ValidTaskID(p) {
		p = "task"
	}
	if len(p) > 80 {
		p = p[:80]
	}
	return fmt.Sprintf("%s-%s-%s", p, time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(b[:]))
}

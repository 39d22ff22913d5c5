package config

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// controlAt returns the first control character of s (C0, DEL or C1; NUL
// included) that is not allowed, and its position in characters, or -1.
// Tab and newline are allowed where multiline says so.
func controlAt(s string, multiline bool) (rune, int) {
	i := 0
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\t' || r == '\n')) {
			return r, i
		}
		i++
	}
	return 0, -1
}

// checkText refuses control characters in a field a person wrote: they
// reach operators' terminals (status, logs) and web pages. content and
// prompt may hold tab and newline; one-line fields none at all.
func checkText(field, s string, multiline bool) *taskfile.RejectError {
	r, at := controlAt(s, multiline)
	if at < 0 {
		return nil
	}
	allowed := "no control characters are allowed here"
	if multiline {
		allowed = "only tab and newline are allowed"
	}
	return taskfile.Rejectf(taskfile.ClassInvalid, "%s: contains the control character %s at character %d: %s", field, controlName(r), at+1, allowed)
}

func controlName(r rune) string {
	names := map[rune]string{0: "NUL", '\t': "tab", '\n': "newline", '\r': "carriage return", 0x1b: "ESC", 0x7f: "DEL"}
	if n, ok := names[r]; ok {
		return fmt.Sprintf("U+%04X (%s)", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}

// ResolveLane decides which lane a decoded task belongs to. dropLane is the
// lane whose incoming/ held it, or "" for the lane-less drop box, where the
// model's kind routes it.
func ResolveLane(cfg *Config, t *taskfile.Task, dropLane taskfile.Kind) (taskfile.Kind, *taskfile.RejectError) {
	if t.ModelKind != "" && !t.ModelKind.Valid() {
		return dropLane, taskfile.Rejectf(taskfile.ClassInvalid, "modelKind: %q is not web or api", t.ModelKind)
	}
	m, ok := cfg.Model(t.Model)
	lane := dropLane
	if lane == "" {
		switch {
		case ok:
			lane = m.Kind
		case t.ModelKind != "":
			lane = t.ModelKind
		default:
			lane = taskfile.KindAPI
		}
	}
	return lane, nil
}

// Validate checks a decoded drop against the config for lane, exactly as
// intake does. It does not check for duplicates (that needs the disk).
func Validate(cfg *Config, t *taskfile.Task, lane taskfile.Kind) *taskfile.RejectError {
	if t.TaskID == "" {
		return taskfile.Rejectf(taskfile.ClassInvalid, "taskId: empty")
	}
	if p := taskfile.TaskIDProblem(t.TaskID); p != "" {
		return taskfile.Rejectf(taskfile.ClassInvalid, "taskId: %q is not allowed: %s", taskfile.Clip(t.TaskID), p)
	}
	if t.ModelKind != "" && !t.ModelKind.Valid() {
		return taskfile.Rejectf(taskfile.ClassInvalid, "modelKind: %q is not web or api", taskfile.Clip(string(t.ModelKind)))
	}
	if t.ModelKind != "" && t.ModelKind != lane {
		return taskfile.Rejectf(taskfile.ClassInvalid, "modelKind: %q does not match the %s lane it was dropped in", t.ModelKind, lane)
	}
	if t.Model == "" {
		return taskfile.Rejectf(taskfile.ClassInvalid, "model: missing")
	}
	for _, f := range []struct {
		name, v   string
		multiline bool
	}{{"model", t.Model, false}, {"batch", t.Batch, false}, {"title", t.Title, false}, {"output", t.Output, false}, {"prompt", t.Prompt, true}, {"content", t.Content, true}} {
		if rej := checkText(f.name, f.v, f.multiline); rej != nil {
			return rej
		}
	}
	m, ok := cfg.Model(t.Model)
	if !ok {
		return taskfile.Rejectf(taskfile.ClassInvalid, "model: %q is not in the config (known: %s)", taskfile.Clip(t.Model), modelNames(cfg))
	}
	if m.Kind != lane {
		return taskfile.Rejectf(taskfile.ClassInvalid, "model: %q is a %s model, not for the %s lane", t.Model, m.Kind, lane)
	}
	if strings.TrimSpace(t.Content) == "" {
		return taskfile.Rejectf(taskfile.ClassInvalid, "content: missing or empty")
	}
	if t.Output != "" {
		if err := CheckOutputPath(t.Output); err != nil {
			return taskfile.Rejectf(taskfile.ClassInvalid, "output: %v", err)
		}
	}
	for _, f := range t.Sampling.Set() {
		if !m.AllowsField(f) {
			allowed := "none"
			if len(m.RequestFields) > 0 {
				allowed = strings.Join(m.RequestFields, ", ")
			}
			return taskfile.Rejectf(taskfile.ClassInvalid, "sampling.%s: model %s does not take a per-task %s (its requestFields: %s)", f, t.Model, f, allowed)
		}
	}
	if t.Schema != "" {
		if _, err := taskfile.CompileSchema(t.Schema); err != nil {
			return taskfile.Rejectf(taskfile.ClassInvalid, "%v", err)
		}
	}
	if !t.Priority.Valid() {
		return taskfile.Rejectf(taskfile.ClassInvalid, "priority: %q is not high, normal or low", taskfile.Clip(string(t.Priority)))
	}
	if len(t.Batch) > 128 {
		return taskfile.Rejectf(taskfile.ClassInvalid, "batch: must be one line of at most 128 bytes")
	}
	if utf8.RuneCountInString(t.Title) > MaxTitle {
		return taskfile.Rejectf(taskfile.ClassInvalid, "title: must be one line of at most %d characters", MaxTitle)
	}
	return nil
}

// MaxTitle is the most characters a task's title may have.
const MaxTitle = 200

// CheckOutputPath accepts a relative path under <spool>/output without
// "..". Symlinks and folders are checked against the disk by
// Store.CheckOutput at intake and again, race-free, by WriteOutput.
func CheckOutputPath(p string) error {
	if strings.ContainsRune(p, 0) || strings.ContainsAny(p, "\n\r") {
		return fmt.Errorf("%q contains control characters", taskfile.Clip(p))
	}
	slashed := filepath.ToSlash(p)
	if path.IsAbs(slashed) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" || strings.HasPrefix(slashed, "/") {
		return fmt.Errorf("%q is absolute: give a path relative to the spool's output/ folder", taskfile.Clip(p))
	}
	clean := path.Clean(slashed)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(slashed, "\\") && strings.Contains(slashed, "..") {
		return fmt.Errorf("%q escapes the spool's output/ folder", taskfile.Clip(p))
	}
	for _, part := range strings.Split(slashed, "/") {
		if part == ".." {
			return fmt.Errorf("%q contains \"..\": give a path inside the spool's output/ folder without it", taskfile.Clip(p))
		}
	}
	if len(p) > 1024 {
		return fmt.Errorf("longer than 1024 characters")
	}
	return nil
}

func modelNames(cfg *Config) string {
	if len(cfg.Models) == 0 {
		return "none configured"
	}
	var b []string
	for _, m := range cfg.Models {
		b = append(b, m.Name)
	}
	return strings.Join(b, ", ")
}

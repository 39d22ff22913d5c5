package spool

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// RejectError is why a drop was refused. Its message is one line that names
// the field or YAML line at fault; it goes into NAME.error.
type RejectError struct {
	Class ErrorClass // invalid or duplicate
	Msg   string
}

func (e *RejectError) Error() string { return e.Msg }

func rejectf(c ErrorClass, format string, args ...any) *RejectError {
	return &RejectError{Class: c, Msg: OneLine(fmt.Sprintf(format, args...))}
}

// ResolveLane decides which lane a decoded task belongs to. dropLane is the
// lane whose incoming/ held it, or "" for the lane-less drop box, where the
// model's kind routes it.
func ResolveLane(cfg *Config, t *Task, dropLane Kind) (Kind, *RejectError) {
	if t.ModelKind != "" && !t.ModelKind.Valid() {
		return dropLane, rejectf(ClassInvalid, "modelKind: %q is not web or api", t.ModelKind)
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
			lane = KindAPI
		}
	}
	return lane, nil
}

// Validate checks a decoded drop against the config for lane, exactly as
// intake does. It does not check for duplicates (that needs the disk).
func Validate(cfg *Config, t *Task, lane Kind) *RejectError {
	if t.TaskID == "" {
		return rejectf(ClassInvalid, "taskId: empty")
	}
	if p := TaskIDProblem(t.TaskID); p != "" {
		return rejectf(ClassInvalid, "taskId: %q is not allowed: %s", clip(t.TaskID), p)
	}
	if t.ModelKind != "" && !t.ModelKind.Valid() {
		return rejectf(ClassInvalid, "modelKind: %q is not web or api", clip(string(t.ModelKind)))
	}
	if t.ModelKind != "" && t.ModelKind != lane {
		return rejectf(ClassInvalid, "modelKind: %q does not match the %s lane it was dropped in", t.ModelKind, lane)
	}
	if t.Model == "" {
		return rejectf(ClassInvalid, "model: missing")
	}
	for _, f := range []struct {
		name, v   string
		multiline bool
	}{{"model", t.Model, false}, {"batch", t.Batch, false}, {"output", t.Output, false}, {"prompt", t.Prompt, true}, {"content", t.Content, true}} {
		if rej := checkText(f.name, f.v, f.multiline); rej != nil {
			return rej
		}
	}
	m, ok := cfg.Model(t.Model)
	if !ok {
		return rejectf(ClassInvalid, "model: %q is not in the config (known: %s)", clip(t.Model), modelNames(cfg))
	}
	if m.Kind != lane {
		return rejectf(ClassInvalid, "model: %q is a %s model, not for the %s lane", t.Model, m.Kind, lane)
	}
	if strings.TrimSpace(t.Content) == "" {
		return rejectf(ClassInvalid, "content: missing or empty")
	}
	if t.Output != "" {
		if err := CheckOutputPath(t.Output); err != nil {
			return rejectf(ClassInvalid, "output: %v", err)
		}
	}
	if !t.Priority.Valid() {
		return rejectf(ClassInvalid, "priority: %q is not high, normal or low", clip(string(t.Priority)))
	}
	if len(t.Batch) > 128 {
		return rejectf(ClassInvalid, "batch: must be one line of at most 128 bytes")
	}
	return nil
}

// CheckOutputPath accepts a relative path under <spool>/output without
// "..". Symlinks and folders are checked against the disk by
// Store.CheckOutput at intake and again, race-free, by WriteOutput.
func CheckOutputPath(p string) error {
	if strings.ContainsRune(p, 0) || strings.ContainsAny(p, "\n\r") {
		return fmt.Errorf("%q contains control characters", clip(p))
	}
	slashed := filepath.ToSlash(p)
	if path.IsAbs(slashed) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" || strings.HasPrefix(slashed, "/") {
		return fmt.Errorf("%q is absolute: give a path relative to the spool's output/ folder", clip(p))
	}
	clean := path.Clean(slashed)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(slashed, "\\") && strings.Contains(slashed, "..") {
		return fmt.Errorf("%q escapes the spool's output/ folder", clip(p))
	}
	for _, part := range strings.Split(slashed, "/") {
		if part == ".." {
			return fmt.Errorf("%q contains \"..\": give a path inside the spool's output/ folder without it", clip(p))
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

// clip shortens user text quoted in a reason so a reason stays one line.
func clip(s string) string {
	if len(s) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never split a character
		}
		s = s[:cut] + "…"
	}
	return OneLine(s)
}

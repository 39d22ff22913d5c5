// Package attach checks the files a task carries to its model
// (`attachments:`): where each may come from, what it may be, and which
// model takes it. Intake, the command line's submit, the console and the
// HTTP door all call Check, so a drop is refused for the same reason on
// every path; the executors call Load before they send, so the bytes a
// model gets are the bytes intake checked.
package attach

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// FilesFolder is the spool's folder of shared attachments: <spool>/files.
func FilesFolder(spoolRoot string) string { return filepath.Join(spoolRoot, "files") }

// Dirs are the folders a relative attachment path is looked up in, in
// order: the task file's own folder ("" where there is none, the HTTP
// door's tasks) and the spool's files/.
type Dirs struct {
	Task  string
	Files string
}

// Check resolves, reads and sniffs every attachment of t (of lane, its
// model known to cfg: config.Validate ran first) and returns what it found,
// in t's order, or the one-line reason that refuses the task. Nothing is
// written, and t's files are only read.
func Check(cfg *config.Config, t *taskfile.Task, dirs Dirs) ([]taskfile.Attachment, *taskfile.RejectError) {
	if len(t.Attachments) == 0 {
		return nil, nil
	}
	if n := len(t.Attachments); n > taskfile.MaxAttachments {
		return nil, rejectf("%d files, more than the %d a task may carry", n, taskfile.MaxAttachments)
	}
	m, ok := cfg.Model(t.Model)
	if !ok {
		return nil, rejectf("model %q is not in the config", taskfile.Clip(t.Model))
	}
	if m.Kind == taskfile.KindWeb {
		if site := cfg.Sites[m.Site]; site.Upload == "" {
			return nil, rejectf("model %s takes no attachments: its site %s has no `upload:` key", m.Name, m.Site)
		}
	}
	out := make([]taskfile.Attachment, 0, len(t.Attachments))
	names := map[string]string{}
	inline := 0
	for _, p := range t.Attachments {
		a, rej := checkOne(cfg, m, p, dirs)
		if rej != nil {
			return nil, rej
		}
		// The page's chip shows a file by its name: two of one name could
		// not be told apart.
		if prev, dup := names[a.Name]; dup {
			return nil, rejectf("%q and %q have the same name %s", taskfile.Clip(prev), taskfile.Clip(p), a.Name)
		}
		names[a.Name] = p
		if m.Kind == taskfile.KindAPI && KindOf(a.Type) == config.AttachText {
			if inline += a.Size; inline > cfg.Attachments.InlineText {
				return nil, rejectf("the text files come to more than attachments.inlineText (%d bytes) that model %s inlines", cfg.Attachments.InlineText, m.Name)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

func rejectf(format string, args ...any) *taskfile.RejectError {
	return taskfile.Rejectf(taskfile.ClassInvalid, "attachments: "+format, args...)
}

// checkOne checks one path as the submitter wrote it.
func checkOne(cfg *config.Config, m *config.ModelConfig, p string, dirs Dirs) (taskfile.Attachment, *taskfile.RejectError) {
	q := taskfile.Clip(p)
	root, parts, looked, rej := resolve(cfg, p, dirs)
	if rej != nil {
		return taskfile.Attachment{}, rej
	}
	if root == "" {
		return taskfile.Attachment{}, rejectf("%q not found (looked in %s)", q, strings.Join(looked, " and "))
	}
	full := filepath.Join(append([]string{root}, parts...)...)
	fi, err := os.Lstat(full)
	if err != nil {
		return taskfile.Attachment{}, rejectf("%q cannot be read: %v", q, fsx.UnwrapLink(err))
	}
	if max := cfg.Attachments.MaxBytes; fi.Size() > int64(max) {
		return taskfile.Attachment{}, rejectf("%q is %d bytes, over attachments.maxBytes (%d)", q, fi.Size(), max)
	}
	data, _, err := fsx.ReadRegular(full, int64(cfg.Attachments.MaxBytes))
	if err != nil {
		return taskfile.Attachment{}, rejectf("%q cannot be read: %v", q, err)
	}
	mime := Sniff(parts[len(parts)-1], data)
	kind := KindOf(mime)
	switch {
	case kind == "":
		return taskfile.Attachment{}, rejectf("%q is not an image, PDF, Office file or UTF-8 text (its bytes read as %s)", q, mime)
	case !cfg.Attachments.Allows(kind):
		return taskfile.Attachment{}, rejectf("%q is %s, which attachments.types does not allow (%s)", q, kindName(kind), strings.Join(cfg.Attachments.Types, ", "))
	case m.Kind == taskfile.KindAPI && kind == config.AttachImage && !m.Vision:
		return taskfile.Attachment{}, rejectf("model %s takes no image attachments (%q): it is not marked vision: true", m.Name, q)
	case m.Kind == taskfile.KindAPI && kind != config.AttachImage && kind != config.AttachText:
		return taskfile.Attachment{}, rejectf("model %s takes no %s attachments (%q): an api model takes images (vision: true) and text", m.Name, kindName(kind), q)
	}
	sum := sha256.Sum256(data)
	return taskfile.Attachment{Name: parts[len(parts)-1], Path: full, Type: mime, Size: len(data), SHA256: hex.EncodeToString(sum[:])}, nil
}

func kindName(k string) string {
	switch k {
	case config.AttachPDF:
		return "PDF"
	case config.AttachOffice:
		return "Office"
	}
	return k
}

// resolve finds the folder p lives under and its parts below it: for an
// absolute p, the root of attachments.roots (or the spool's files/) that
// holds it; for a relative one, the first of dirs that has something at
// p. root is "" when nothing is there; looked lists where it looked.
func resolve(cfg *config.Config, p string, dirs Dirs) (root string, parts, looked []string, rej *taskfile.RejectError) {
	q := taskfile.Clip(p)
	if rej := CheckPath(p); rej != nil {
		return "", nil, nil, rej
	}
	if filepath.IsAbs(p) {
		roots := slices.Clone(cfg.Attachments.Roots)
		if dirs.Files != "" {
			roots = append(roots, dirs.Files)
		}
		for _, r := range roots {
			rel, err := filepath.Rel(r, filepath.Clean(p))
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			parts, _ := fsx.SplitRel(rel)
			if rej := checkBeneath(r, parts, q); rej != nil {
				return "", nil, nil, rej
			}
			if exists(r, parts) {
				return r, parts, nil, nil
			}
			return "", nil, []string{r}, nil
		}
		return "", nil, nil, rejectf("%q is not under the spool's files/ or a folder of attachments.roots", q)
	}
	parts, err := fsx.SplitRel(p)
	if err != nil {
		return "", nil, nil, rejectf("%v", err)
	}
	for _, d := range []string{dirs.Task, dirs.Files} {
		if d == "" {
			continue
		}
		looked = append(looked, d)
		if rej := checkBeneath(d, parts, q); rej != nil {
			return "", nil, nil, rej
		}
		if exists(d, parts) {
			return d, parts, nil, nil
		}
	}
	return "", nil, looked, nil
}

// checkBeneath refuses a path that goes through a link or a non-folder
// below root, or ends in anything but a regular file.
func checkBeneath(root string, parts []string, q string) *taskfile.RejectError {
	kind, at, err := fsx.LstatBeneath(root, parts)
	switch {
	case err != nil:
		return rejectf("%q: %v", q, fsx.UnwrapLink(err))
	case kind == "symlink":
		return rejectf("%q goes through %s, which is a symlink: attachments are never read through links", q, at)
	case kind != "":
		return rejectf("%q goes through %s, which is a %s, not a file", q, at, kind)
	}
	return nil
}

func exists(root string, parts []string) bool {
	_, err := os.Lstat(filepath.Join(append([]string{root}, parts...)...))
	return err == nil
}

// CheckPath checks the text of one attachment path, before the disk is
// asked: one line, no control character, no "..", a sane length.
func CheckPath(p string) *taskfile.RejectError {
	q := taskfile.Clip(p)
	switch {
	case strings.TrimSpace(p) == "":
		return rejectf("an empty path")
	case len(p) > 1024:
		return rejectf("%q is longer than 1024 bytes", q)
	case strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return rejectf("%q contains control characters", q)
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return rejectf("%q contains \"..\": name a file inside the task's folder, the spool's files/ or a root of attachments.roots", q)
		}
	}
	return nil
}

// ErrChanged: an attachment's bytes are not those intake checked.
var ErrChanged = errors.New("attachment changed since intake")

// ErrUnchecked: a task names attachments without intake's record of them
// (its daemon-written fields were dropped: the file was edited on the
// share while it waited).
var ErrUnchecked = errors.New("attachments not checked at intake")

// Loaded is one attachment's record with its bytes.
type Loaded struct {
	taskfile.Attachment
	Data []byte
}

// Load reads every attachment of t again, as intake recorded it, and
// returns the bytes: each must still be a regular file of the recorded
// size and SHA-256, else ErrChanged names it. limit bounds a read.
func Load(t *taskfile.Task, limit int) ([]Loaded, error) {
	if !t.AttachmentsRecorded() {
		return nil, fmt.Errorf("%w: the task names %d and intake recorded %d; submit it again", ErrUnchecked, len(t.Attachments), len(t.AttachmentsChecked))
	}
	out := make([]Loaded, 0, len(t.AttachmentsChecked))
	for _, a := range t.AttachmentsChecked {
		data, _, err := fsx.ReadRegular(a.Path, int64(max(limit, a.Size)))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrChanged, a.Name, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); len(data) != a.Size || got != a.SHA256 {
			return nil, fmt.Errorf("%w: %s is now %d bytes, SHA-256 %.12s…, not the %d bytes, %.12s… checked at intake", ErrChanged, a.Name, len(data), got, a.Size, a.SHA256)
		}
		out = append(out, Loaded{Attachment: a, Data: data})
	}
	return out, nil
}

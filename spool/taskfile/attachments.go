package taskfile

import "strings"

// A task may carry files to the model (`attachments:`, the submitter's:
// paths as the submitter wrote them). Intake resolves and reads each one
// and records what it found in `attachmentsChecked:`, a field only a
// daemon writes (cleared by ResetForIntake, so a record that failed its
// seal loses it and a hand-made one is never trusted). The executor reads
// each file again before it sends and compares its size and SHA-256 with
// the record: a file changed on the share after intake fails the task
// instead of sending other bytes than were checked.

// Attachment is one attachment as intake checked it.
type Attachment struct {
	// Name is the file's base name, as the page's chip shows it.
	Name string `yaml:"name"`
	// Path is where intake found it: absolute, resolved, no link on the way.
	Path string `yaml:"path"`
	// Type is the MIME type sniffed from its bytes (and, for Office files,
	// its extension): image/jpeg, application/pdf, text/plain...
	Type   string `yaml:"type"`
	Size   int    `yaml:"size"`
	SHA256 string `yaml:"sha256"`
}

// MaxAttachments is how many files one task may carry.
const MaxAttachments = 10

// AttachmentsRecorded reports whether t's attachments were checked at
// intake: every named file has its record.
func (t *Task) AttachmentsRecorded() bool {
	return len(t.AttachmentsChecked) == len(t.Attachments)
}

// appendAttachments is appendTask's part for the two attachment lists,
// in yaml.v3's layout (indent 2): a sequence under its key, each item
// opened by "  - ".
func (e *fastEncoder) attachments(names []string, checked []Attachment) {
	if len(names) > 0 {
		e.key(0, "attachments")
		e.b = append(e.b, '\n')
		for _, n := range names {
			e.item(n)
		}
	}
	if len(checked) > 0 {
		e.key(0, "attachmentsChecked")
		e.b = append(e.b, '\n')
		for _, a := range checked {
			e.b = append(e.b, "  - "...)
			e.first = true
			e.str(4, "name", a.Name)
			e.str(4, "path", a.Path)
			e.str(4, "type", a.Type)
			e.int(4, "size", a.Size)
			e.str(4, "sha256", a.SHA256)
		}
	}
}

// item writes one plain or single-quoted string of a sequence, or gives
// the task to yaml.v3.
func (e *fastEncoder) item(s string) {
	if !e.ok {
		return
	}
	quote, ok := false, s != ""
	if ok {
		quote, ok = lineStyle(s)
	}
	if !ok {
		e.ok = false
		return
	}
	e.b = append(e.b, "  - "...)
	if quote {
		e.b = append(e.b, '\'')
		e.b = append(e.b, strings.ReplaceAll(s, "'", "''")...)
		e.b = append(e.b, '\'')
	} else {
		e.b = append(e.b, s...)
	}
	e.b = append(e.b, '\n')
}

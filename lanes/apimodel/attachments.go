package apimodel

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A task's attachments reach an api model inside its user message: text
// files inlined after the content, each named and fenced; images, for a
// model marked vision: true, as image_url parts holding data URLs (the
// bytes themselves: the vendor fetches no URL of ours). Intake refused
// every other kind, and every image for a model without vision.

// contentPart is one part of a multi-part user message.
type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

// loadAttachments reads the task's attachments as intake recorded them;
// a file changed since, or a record lost, fails the task as invalid: it
// would send other bytes than were checked.
func loadAttachments(t *taskfile.Task, limit int) ([]attach.Loaded, error) {
	if len(t.Attachments) == 0 {
		return nil, nil
	}
	files, err := attach.Load(t, limit)
	if err != nil {
		if errors.Is(err, attach.ErrChanged) || errors.Is(err, attach.ErrUnchecked) {
			return nil, attempt.Errorf(taskfile.ClassInvalid, "%v", err)
		}
		return nil, err
	}
	return files, nil
}

// userContent is the user message's content: the task's content with the
// text files inlined, as a string; with images, a list of parts, the text
// first.
func userContent(content string, files []attach.Loaded) any {
	var b strings.Builder
	b.WriteString(content)
	var images []contentPart
	for _, f := range files {
		switch attach.KindOf(f.Type) {
		case config.AttachText:
			text := string(f.Data)
			fence := fenceFor(text)
			b.WriteString("\n\nAttached file " + f.Name + ":\n" + fence + "\n" + strings.TrimSuffix(text, "\n") + "\n" + fence)
		case config.AttachImage:
			images = append(images, contentPart{Type: "image_url", ImageURL: &imageURL{URL: DataURL(f.Type, f.Data)}})
		}
	}
	if len(images) == 0 {
		return b.String()
	}
	return append([]contentPart{{Type: "text", Text: b.String()}}, images...)
}

// DataURL is the data: URL of data of MIME type mime, base64.
func DataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// fenceFor is a Markdown code fence longer than any run of backticks in
// text, so the file cannot close it.
func fenceFor(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

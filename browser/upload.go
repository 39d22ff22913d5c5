package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A task's attachments go onto the page the way a person's do: through
// the site's file input (`upload:`), set with CDP's DOM.setFileInputFiles,
// never through an OS dialog. When `upload` is the button that opens the
// input (the paperclip), the page's file chooser is intercepted
// (Page.setInterceptFileChooserDialog): the click opens no dialog, and
// Chromium names the input it would have filled. The files count as
// attached only once the page's chips or thumbnails (`attached:`) show
// every one by name; otherwise the attempt fails as environment naming
// the missing files, before anything is sent.
//
// The files set are copies of the bytes read again and compared with
// intake's record (size, SHA-256), written to a private temp folder under
// their own names: a file edited on the share after intake fails the task
// as invalid instead of sending other bytes, and a file swapped between
// the check and Chromium's read changes nothing.
//
// Uploads happen only on the send path, after the page opened a new chat:
// an attempt that reattaches to a sent conversation uploads nothing. An
// attempt that finds an earlier one put the files on a page and ended
// before its send (a crash) uploads them again, into its new chat, and
// says so in its record.

// attachWait bounds how long the page may take to show the chips.
const attachWait = 30 * time.Second

// attachFiles puts task's attachments on the page and waits for its chips.
// It returns a cleanup for the copies (call it once the attempt is over)
// and records what was attached in the attempt's record.
func (d *driver) attachFiles(ctx context.Context, task *taskfile.Task) (cleanup func(), err error) {
	cleanup = func() {}
	if len(task.Attachments) == 0 {
		return cleanup, nil
	}
	if d.site.Upload == "" {
		return cleanup, attempt.Errorf(taskfile.ClassInvalid, "attachments: site %s has no `upload:` key: it takes no files", d.siteName)
	}
	files, err := attach.Load(task, 0)
	if err != nil {
		return cleanup, attempt.Errorf(taskfile.ClassInvalid, "attachments: %v", err)
	}
	dir, err := os.MkdirTemp("", "spoolgate-attach-")
	if err != nil {
		return cleanup, fmt.Errorf("attachments: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	var paths, names []string
	for i, f := range files {
		// One folder per file: the page sees each file under its own name.
		p := filepath.Join(dir, fmt.Sprint(i), f.Name)
		if err := os.Mkdir(filepath.Dir(p), 0o700); err != nil {
			return cleanup, fmt.Errorf("attachments: %w", err)
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return cleanup, fmt.Errorf("attachments: %w", err)
		}
		paths, names = append(paths, p), append(names, f.Name)
	}
	d.stage("attaching files")
	if err := d.setFiles(ctx, paths); err != nil {
		return cleanup, err
	}
	if err := d.awaitChips(ctx, names); err != nil {
		return cleanup, err
	}
	d.attached = strings.Join(names, ", ")
	d.attachNote = reupload(task)
	d.step("files attached", "files", d.attached)
	if d.send.record != nil {
		// Recorded before the send: a crash from here on leaves a record
		// that the next attempt reads (reupload).
		if err := d.send.record(nil, &taskfile.Delivery{Attempt: d.send.attempt, Account: d.send.account, Attached: d.attached}); err != nil {
			return cleanup, err
		}
	}
	return cleanup, nil
}

// reupload says why this attempt uploads files an earlier attempt put on
// a page already, or "".
func reupload(task *taskfile.Task) string {
	for i := len(task.Attempts) - 1; i >= 0; i-- {
		a := task.Attempts[i]
		if a.N < task.Attempt && a.Attached != "" && a.Delivery == "" {
			return fmt.Sprintf("uploaded again: attempt %d attached the files to a page it never sent from (it ended before the send); this attempt's page is a new chat", a.N)
		}
	}
	return ""
}

// withAttached adds what the attempt attached to its delivery line.
func (d *driver) withAttached(del *taskfile.Delivery) {
	del.Attached = d.attached
	if d.attachNote != "" {
		del.Reason = strings.TrimPrefix(del.Reason+"; "+d.attachNote, "; ")
	}
}

// fileTarget is what the upload selector matches.
type fileTarget struct {
	Found     bool `json:"found"`
	FileInput bool `json:"fileInput"`
	Multiple  bool `json:"multiple"`
	Bad       string
}

// setFiles hands paths to the page's file input: the `upload` element
// itself when it is one, else the input its click opens.
func (d *driver) setFiles(ctx context.Context, paths []string) error {
	sel := d.site.Upload
	tg, err := chromedp.Run(ctx, chromedp.Evaluate[fileTarget](`(() => {`+helpers+`
const r = qa(`+js(sel)+`), el = r.els[0];
return {found: !!el, bad: r.bad || '', fileInput: !!el && el.tagName === 'INPUT' && el.type === 'file', multiple: !!el && !!el.multiple};
})()`))
	switch {
	case err != nil:
		return d.fail(ctx, "find upload: %w", err)
	case !tg.Found:
		return d.missing("upload", sel, 0, tg.Bad)
	case tg.FileInput:
		if tg.Multiple {
			return d.setInput(ctx, sel, paths)
		}
		for _, p := range paths { // one at a time: the page takes each on its change
			if err := d.setInput(ctx, sel, []string{p}); err != nil {
				return err
			}
		}
		return nil
	}
	return d.chooseFiles(ctx, sel, paths)
}

// setInput sets the files of the input[type=file] sel matches, found as
// the page's own helpers find it (open shadow roots too).
func (d *driver) setInput(ctx context.Context, sel string, paths []string) error {
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: `(() => {` + helpers + `return q(` + js(sel) + `); })()`})
	switch {
	case err != nil:
		return d.fail(ctx, "find upload: %w", err)
	case res.ExceptionDetails != nil || res.Result == nil || res.Result.ObjectID == "":
		return d.missing("upload", sel, 0, "")
	}
	defer func() {
		_, _ = chromedp.Call(ctx, runtime.ReleaseObject, runtime.ReleaseObjectParams{ObjectID: res.Result.ObjectID})
	}()
	if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: paths, ObjectID: res.Result.ObjectID}); err != nil {
		return d.fail(ctx, "set the files: %w", err)
	}
	return nil
}

// chooseFiles clicks the button sel with the page's file chooser
// intercepted, and sets paths on the input Chromium says it opened: all
// at once, or one click per file for an input that takes one.
func (d *driver) chooseFiles(ctx context.Context, sel string, paths []string) error {
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	opened := make(chan *page.EventFileChooserOpened, 4)
	if err := chromedp.Listen(lctx, func(ev any) {
		if e, ok := ev.(*page.EventFileChooserOpened); ok {
			select {
			case opened <- e:
			default:
			}
		}
	}); err != nil {
		return d.fail(ctx, "watch the file chooser: %w", err)
	}
	if _, err := chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		return d.fail(ctx, "intercept the file chooser: %w", err)
	}
	defer func() {
		_, _ = chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: false})
	}()
	for len(paths) > 0 {
		if found, err := d.click(ctx, sel); err != nil {
			return d.fail(ctx, "click upload: %w", err)
		} else if !found {
			return d.missing("upload", sel, 0, "")
		}
		var ev *page.EventFileChooserOpened
		select {
		case ev = <-opened:
		case <-time.After(attachWait):
			return attempt.Errorf(taskfile.ClassEnvironment, "site %s: a click on upload %q opened no file input within %s: point upload at the input[type=file] or the button that opens it", d.siteName, sel, attachWait)
		case <-ctx.Done():
			return ctx.Err()
		}
		if ev.BackendNodeID == 0 {
			return attempt.Errorf(taskfile.ClassEnvironment, "site %s: upload %q opened a file chooser of no input[type=file] (a file-system picker spoolgate cannot fill)", d.siteName, sel)
		}
		take := paths
		if ev.Mode == page.FileChooserOpenedModeSelectSingle {
			take = paths[:1]
		}
		if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: take, BackendNodeID: ev.BackendNodeID}); err != nil {
			return d.fail(ctx, "set the files: %w", err)
		}
		paths = paths[len(take):]
	}
	return nil
}

// chipState is what the page's `attached` elements show.
type chipState struct {
	Count int      `json:"count"`
	Texts []string `json:"texts"`
}

// awaitChips waits until the `attached` elements show every name (in
// their text, title, aria-label or data-name), for up to attachWait.
func (d *driver) awaitChips(ctx context.Context, names []string) error {
	deadline := time.Now().Add(attachWait)
	var missing []string
	for {
		st, err := chromedp.Run(ctx, chromedp.Evaluate[chipState](`(() => {`+helpers+`
const els = qa(`+js(d.site.Attached)+`).els;
return {count: els.length, texts: els.map((e) => [e.innerText || e.textContent || '', e.getAttribute('title') || '', e.getAttribute('aria-label') || '', e.getAttribute('data-name') || ''].join('\n'))};
})()`))
		if err != nil {
			return d.fail(ctx, "read attached: %w", err)
		}
		missing = missing[:0]
		for _, n := range names {
			shown := false
			for _, t := range st.Texts {
				shown = shown || strings.Contains(t, n)
			}
			if !shown {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 && st.Count >= len(names) {
			return nil
		}
		if time.Now().After(deadline) {
			return attempt.Errorf(taskfile.ClassEnvironment, "site %s: the page shows no attachment for %s after %s (attached %q matches %d elements); nothing was sent", d.siteName, strings.Join(missing, ", "), attachWait, d.site.Attached, st.Count)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d.t.Poll):
		}
	}
}

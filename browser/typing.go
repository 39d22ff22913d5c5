package browser

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// How text gets into a field. Checked on Chromium 156 (chromedp v0.23.1)
// against a textarea, a plain contenteditable, ProseMirror, Lexical and
// Quill (browser/typing_test.go): typing line by line with Input.insertText
// and a Shift+Enter key-down carrying the text "\r" between lines gives
// the exact text in all five. chromedp's KeyEvent for Shift+Enter leaves
// stray spaces or newlines in the editors, a raw key-down inserts nothing
// in a textarea, one insertText of the whole text triples blank lines in
// a plain contenteditable, and a synthetic paste does nothing in a
// textarea and drops blank lines in ProseMirror. So lines first; a field
// that does not read back as meant is cleared and filled once more by a
// second method (its value setter, execCommand, or a paste); if that does
// not read back as meant either, the attempt fails as environment.
const (
	methodLines = "lines"       // Input.insertText per line, Shift+Enter between lines
	methodValue = "value"       // the field's own value setter and an input event (textarea, input)
	methodExec  = "execCommand" // insertText / insertLineBreak commands (plain contenteditable)
	methodPaste = "paste"       // a paste event carrying text/plain (editor frameworks)
)

// fieldInfo is what the page says about a field it was asked to focus.
type fieldInfo struct {
	Found  bool   `json:"found"`
	Shadow int    `json:"shadow"`
	Bad    string `json:"bad"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
}

// typed is how one text went into a field.
type typed struct {
	Kind   string
	Method string
	Chars  int
	Took   time.Duration
}

// meantText is the text as the page should hold it: line ends as "\n",
// trailing line breaks left out (no chat sends them, and a YAML block
// scalar always ends with one).
func meantText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.TrimRight(s, "\n")
}

// sameText compares what a field holds with what was meant, after the
// normalisation every kind of field needs: a no-break space counts as a
// space (contenteditable keeps runs of spaces as "&nbsp; "), zero-width
// characters that editors use as caret anchors are dropped.
func sameText(got, want string) bool { return normField(got) == normField(want) }

var fieldNorm = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u00a0", " ", "\u200b", "", "\ufeff", "")

func normField(s string) string { return strings.TrimRight(fieldNorm.Replace(s), "\n") }

// firstDiff describes where got and want part, for the error line.
func firstDiff(got, want string) string {
	g, w := []rune(normField(got)), []rune(normField(want))
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	clip := func(r []rune) string {
		lo, hi := max(0, i-15), min(len(r), i+25)
		return string(r[lo:hi])
	}
	return fmt.Sprintf("they part at character %d: meant %q, field holds %q (%d and %d characters)", i, clip(w), clip(g), len(w), len(g))
}

// focusField finds the editable element behind sel (the element itself,
// or a textarea, input or contenteditable inside it or its shadow root),
// remembers it for the later steps, focuses it and reads it.
func (d *driver) focusField(ctx context.Context, sel string) (fieldInfo, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[fieldInfo](`(() => {`+helpers+`
const r = qa(`+js(sel)+`);
if (!r.els.length) return {found: false, shadow: r.shadow, bad: r.bad || ''};
const el = editable(r.els[0]);
window[FIELD] = el;
el.focus();
return {found: true, shadow: r.shadow, kind: fieldKind(el), text: fieldText(el)};
})()`))
}

// readField reads the remembered field as the page would send it.
func (d *driver) readField(ctx context.Context) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {`+helpers+`return fieldText(window[FIELD]); })()`))
}

// clearField empties the focused field the way a person would: select
// all, then Backspace; a field that keeps its text is emptied by command.
func (d *driver) clearField(ctx context.Context) error {
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {`+helpers+`
const el = window[FIELD];
el.focus();
if (typeof el.select === 'function') el.select();
else { const r = document.createRange(); r.selectNodeContents(el); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
})()`)); err != nil {
		return err
	}
	if err := d.key(ctx, "Backspace", "Backspace", 8, "", 0); err != nil {
		return err
	}
	got, err := d.readField(ctx)
	if err != nil || normField(got) == "" {
		return err
	}
	// By command; a text field that still holds text then gets its own
	// value setter (what a framework's controlled input listens to).
	return chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {`+helpers+`
const el = window[FIELD]; el.focus();
if ('value' in el && typeof el.value === 'string') { el.select(); }
document.execCommand('selectAll'); document.execCommand('delete');
if ('value' in el && typeof el.value === 'string' && el.value !== '') {
  const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
  if (set) set.call(el, ''); else el.value = '';
  el.dispatchEvent(new Event('input', {bubbles: true}));
}
})()`))
}

// emptyField makes sure the focused field is empty before anything is
// typed into it: a site's saved draft, text an earlier attempt left, or
// a pre-filled default would otherwise be sent glued to the task's text.
// A field that still holds text after clearing fails the attempt as
// environment, before anything is typed or sent.
func (d *driver) emptyField(ctx context.Context, key string, t typed, had string) error {
	if normField(had) == "" {
		return nil
	}
	if err := d.clearField(ctx); err != nil {
		return d.fail(ctx, "clear %s: %w", key, err)
	}
	got, err := d.readField(ctx)
	if err != nil {
		return d.fail(ctx, "read %s after clearing: %w", key, err)
	}
	if normField(got) != "" {
		d.log.Error("driver: the field keeps text after clearing; nothing was typed or sent", "key", key, "kind", t.Kind, "fieldHolds", got)
		return attempt.Errorf(taskfile.ClassEnvironment, "site %s: %s (%s) still holds %d characters after clearing; nothing was typed or sent; the text is in the task's log", d.siteName, key, t.Kind, utf8.RuneCountInString(normField(got)))
	}
	d.log.Info("driver: the field held text before typing; cleared and checked empty", "key", key, "chars", utf8.RuneCountInString(normField(had)))
	return nil
}

// key presses one key: a key-down (carrying text, which is what makes the
// browser act on it as typing) and a key-up.
func (d *driver) key(ctx context.Context, key, code string, vk int64, text string, mods int64) error {
	typ := input.DispatchKeyEventTypeRawKeyDown
	if text != "" {
		typ = input.DispatchKeyEventTypeKeyDown
	}
	down := input.DispatchKeyEventParams{Type: typ, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk, Text: text, UnmodifiedText: text, Modifiers: mods}
	if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, down); err != nil {
		return err
	}
	up := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk, Modifiers: mods}
	_, err := chromedp.Call(ctx, input.DispatchKeyEvent, up)
	return err
}

const modShift = 8 // CDP's modifier bit for Shift

// typeLines types text line by line: Input.insertText for each line (one
// round-trip whatever its length) and Shift+Enter between lines, which
// every chat input takes as a new line, never as send.
func (d *driver) typeLines(ctx context.Context, text string) error {
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			if err := d.key(ctx, "Enter", "Enter", 13, "\r", modShift); err != nil {
				return err
			}
		}
		if line == "" {
			continue
		}
		if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: line}); err != nil {
			return err
		}
		if i%64 == 63 {
			d.beat()
		}
	}
	return nil
}

// fillOther puts text into the field by the second method of its kind.
func (d *driver) fillOther(ctx context.Context, kind, text string) (string, error) {
	var method, expr string
	switch kind {
	case "textarea", "input":
		method = methodValue
		expr = `const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
if (set) set.call(el, t); else el.value = t;
el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true}));`
	case "contenteditable":
		method = methodExec
		expr = `t.split('\n').forEach((l, i) => { if (i) document.execCommand('insertLineBreak'); if (l) document.execCommand('insertText', false, l); });`
	default:
		method = methodPaste
		expr = `const dt = new DataTransfer(); dt.setData('text/plain', t);
el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true, composed: true}));`
	}
	err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {`+helpers+`
const el = window[FIELD]; const t = `+js(text)+`; el.focus();
`+expr+`
})()`))
	return method, err
}

// setText makes the field behind sel (site key `key`) hold exactly text,
// and checks that it does by reading the field back as the page would
// send it. A field that matches nothing, is not editable, or cannot hold
// the text fails the attempt as environment, both texts in the log.
func (d *driver) setText(ctx context.Context, key, sel, text string) (typed, error) {
	start := time.Now()
	text = meantText(text)
	info, err := d.focusField(ctx, sel)
	if err != nil {
		return typed{}, d.fail(ctx, "focus %s: %w", key, err)
	}
	if !info.Found {
		return typed{}, d.missing(key, sel, info.Shadow, info.Bad)
	}
	out := typed{Kind: info.Kind, Method: methodLines, Chars: utf8.RuneCountInString(text)}
	switch {
	case info.Kind == "none":
		return out, attempt.Errorf(taskfile.ClassEnvironment, "site %s: %s %q matches an element that is not a text field or contenteditable, nor holds one", d.siteName, key, sel)
	case info.Kind == "input" && strings.Contains(text, "\n"):
		return out, attempt.Errorf(taskfile.ClassEnvironment, "site %s: %s %q is a single-line <input>, and the text has %d line breaks it cannot hold; point %s at the page's multi-line field", d.siteName, key, sel, strings.Count(text, "\n"), key)
	}
	if err := d.emptyField(ctx, key, out, info.Text); err != nil {
		return out, err
	}
	if text == "" {
		return out, nil
	}
	if err := d.typeLines(ctx, text); err != nil {
		return out, d.fail(ctx, "type into %s: %w", key, err)
	}
	got, err := d.readField(ctx)
	if err != nil {
		return out, d.fail(ctx, "read %s back: %w", key, err)
	}
	if !sameText(got, text) {
		d.log.Warn("driver: typed text reads back differently; clearing the field and filling it another way",
			"key", key, "kind", out.Kind, "method", out.Method, "detail", firstDiff(got, text))
		if err := d.clearField(ctx); err != nil {
			return out, d.fail(ctx, "clear %s: %w", key, err)
		}
		if out.Method, err = d.fillOther(ctx, out.Kind, text); err != nil {
			return out, d.fail(ctx, "fill %s: %w", key, err)
		}
		if got, err = d.readField(ctx); err != nil {
			return out, d.fail(ctx, "read %s back: %w", key, err)
		}
		if !sameText(got, text) {
			return out, d.mismatch(key, out, got, text)
		}
	}
	out.Took = time.Since(start)
	return out, nil
}

// mismatch is the environment failure of a field that does not hold what
// was meant; the task's log gets both texts whole.
func (d *driver) mismatch(key string, t typed, got, want string) error {
	d.log.Error("driver: the field does not hold the text meant; nothing was sent", "key", key, "kind", t.Kind, "method", t.Method, "meant", want, "fieldHolds", got)
	return attempt.Errorf(taskfile.ClassEnvironment, "site %s: %s (%s) does not hold the text meant after typing (%s); nothing was sent; both texts are in the task's log", d.siteName, key, t.Kind, firstDiff(got, want))
}

// missing is the failure of a site key whose selector matches nothing on
// a page that has loaded: the site changed or the config is wrong, which
// retrying will not mend, so it fails at once as environment.
func (d *driver) missing(key, sel string, shadow int, bad string) error {
	if bad != "" {
		return attempt.Errorf(taskfile.ClassEnvironment, "site %s: %s %q is not a valid selector: %s", d.siteName, key, sel, bad)
	}
	return attempt.Errorf(taskfile.ClassEnvironment, "site %s: %s %q matches nothing (%s); run `spoolgate check %s`", d.siteName, key, sel, shadowNote(shadow), d.siteName)
}

// shadowNote says where a selector was looked for.
func shadowNote(shadow int) string {
	switch {
	case shadow < 0:
		return "searched through the open shadow roots its >>> names"
	case shadow == 0:
		return "searched the page; it has no open shadow roots"
	default:
		return fmt.Sprintf("searched the page and its %d open shadow roots", shadow)
	}
}

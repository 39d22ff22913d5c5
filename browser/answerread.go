package browser

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The ways an answer is read, best first. Each falls back to the next
// when it cannot deliver (logged): network, the page's own response;
// copy, the answer's copy button with the clipboard write caught inside
// the page; dom, the answer element's HTML converted to Markdown; text,
// its visible text (both as the page renders them, see answerViewJS).
const (
	MethodNetwork = "network"
	MethodCopy    = "copy"
	MethodDOM     = "dom"
	MethodText    = "text"

	FormatMarkdown = "markdown"
	FormatText     = "text"
)

// Methods are the reading methods, best first.
var Methods = []string{MethodNetwork, MethodCopy, MethodDOM, MethodText}

// readSpec is how a site's answer is read and known to have ended.
type readSpec struct {
	done      string   // a selector that shows only under a finished answer
	copy      string   // the answer's copy button (the last match is the last answer's)
	errorTurn string   // inside (or on) the answer: it is the site's error turn
	chrome    []string // UI inside the answer that is not the answer (dom)
	network   *NetSpec
	methods   []string // in order; text last
	strict    bool     // a result that differs from the page fails the attempt
	noCheck   bool     // verify: off: results are not compared with the page
}

// positive reports whether the site names a positive end signal.
func (r readSpec) positive() bool { return r.done != "" || r.network != nil }

// orderMethods returns the methods to try: the site's `read:` list, or
// every method the site's keys allow; text is always the last resort.
func orderMethods(read []string, network bool, copyBtn bool) []string {
	var out []string
	if len(read) > 0 {
		out = append(out, read...)
	} else {
		if network {
			out = append(out, MethodNetwork)
		}
		if copyBtn {
			out = append(out, MethodCopy)
		}
		out = append(out, MethodDOM)
	}
	for _, m := range out {
		if m == MethodText {
			return out
		}
	}
	return append(out, MethodText)
}

// Answer is an answer as a task gets it.
type Answer struct {
	Text   string
	Format string // FormatMarkdown or FormatText
	Method string // the method that delivered it
	// Reasoning is a reasoning model's thinking, as Markdown, told apart
	// from Text (never part of it): the response's reasoning path or a
	// leading <think>…</think> (network, copy), else the page's thinking
	// block. Empty when there is none.
	Reasoning string
	// Signals are the completion signals seen, in order, each with its
	// time since send ("network end 1.204s", "done 1.230s", "quiet …").
	Signals []string
	EndedBy string // the signal that ended the wait
	// Fallbacks say why a better method did not deliver, one per method.
	Fallbacks []string
	// Check is how the answer compares with what the page showed;
	// CheckTook is the time the comparisons took.
	Check     PageCheck
	CheckTook time.Duration
}

// fellBack names the methods that did not deliver before a.Method, in
// order, comma-separated ("network,copy"): the task file's
// resultFallback. "" when the first method delivered.
func (a Answer) fellBack() string {
	var ms []string
	for _, f := range a.Fallbacks {
		m, _, _ := strings.Cut(f, ":")
		if m != a.Method && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	return strings.Join(ms, ",")
}

// copyJS catches the page's clipboard writes inside the page:
// navigator.clipboard.writeText and write (its text/plain item), and
// document.execCommand('copy') (a copy event with a clipboardData of its
// own, or else the selection). The machine's clipboard is never written,
// so two sessions never share one. It is idempotent; `reset` empties the
// list of writes caught.
const copyJS = `(() => {
const K = Symbol.for('spoolgate.copy');
if (!window[K]) {
  const st = window[K] = {texts: []};
  const put = (t) => { st.texts.push(String(t == null ? '' : t)); };
  const fake = {
    writeText: async (t) => { put(t); },
    write: async (items) => {
      for (const it of items || []) {
        if (it && it.types && it.types.includes('text/plain')) {
          const b = await it.getType('text/plain');
          put(typeof b === 'string' ? b : await b.text());
        }
      }
    },
  };
  const cb = navigator.clipboard;
  if (cb) {
    for (const k of ['writeText', 'write']) {
      try { Object.defineProperty(cb, k, {configurable: true, writable: true, value: fake[k]}); } catch (e) {}
    }
  } else {
    try { Object.defineProperty(navigator, 'clipboard', {configurable: true, value: fake}); } catch (e) {}
  }
  const exec = Document.prototype.execCommand;
  document.execCommand = function (cmd, ...rest) {
    if (String(cmd).toLowerCase() !== 'copy') return exec.call(this, cmd, ...rest);
    const dt = new DataTransfer();
    const target = document.activeElement || document.body;
    target.dispatchEvent(new ClipboardEvent('copy', {clipboardData: dt, bubbles: true, cancelable: true, composed: true}));
    let t = dt.getData('text/plain');
    if (!t) {
      const a = document.activeElement;
      t = a && (a.tagName === 'TEXTAREA' || a.tagName === 'INPUT') ? a.value.slice(a.selectionStart || 0, a.selectionEnd || a.value.length) : String(getSelection());
    }
    put(t);
    return true;
  };
}
return true;
})()`

// installCopyCatch makes every document the tab loads catch its clipboard
// writes from its first script on, so a page that keeps its own
// reference to writeText at load is caught as well.
func installCopyCatch(ctx context.Context) error {
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: copyJS})
	return err
}

// copyWait bounds the wait for the copy button's write.
const copyWait = 2 * time.Second

// readCopy clicks the last answer's copy button and returns what the page
// wrote to the (caught) clipboard.
func (d *driver) readCopy(ctx context.Context) (string, error) {
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](copyJS+`, (window[Symbol.for('spoolgate.copy')].texts = [], true)`)); err != nil {
		return "", fmt.Errorf("catch the clipboard: %w", err)
	}
	found, err := d.clickAt(ctx, d.rs.copy, true)
	if err != nil {
		return "", fmt.Errorf("click copy: %w", err)
	}
	if !found {
		return "", fmt.Errorf("copy %q matches nothing", d.rs.copy)
	}
	deadline := time.Now().Add(copyWait)
	for {
		texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window[Symbol.for('spoolgate.copy')].texts`))
		if err != nil {
			return "", fmt.Errorf("read the caught clipboard: %w", err)
		}
		if len(texts) > 0 {
			return texts[len(texts)-1], nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("clicking copy %q wrote nothing to the clipboard within %s", d.rs.copy, copyWait)
		}
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// mdConverter turns answer HTML into GitHub-flavoured Markdown: "-"
// bullets, "*" emphasis, fenced code with its language, tables with
// their alignment (minimal padding), strikethrough.
var mdConverter = htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(
	base.NewBasePlugin(),
	commonmark.NewCommonmarkPlugin(commonmark.WithBulletListMarker("-"), commonmark.WithEmDelimiter("*"), commonmark.WithStrongDelimiter("**"), commonmark.WithCodeBlockFence("```"), commonmark.WithListEndComment(false)),
	table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal), table.WithHeaderPromotion(true)),
	strikethrough.NewStrikethroughPlugin(),
))

// htmlToMarkdown converts answer HTML to Markdown.
func htmlToMarkdown(html string) (string, error) {
	md, err := mdConverter.ConvertString(html)
	return tightenLists(md), err
}

// listItem is a Markdown list item's first line: its indent and marker.
var listItem = regexp.MustCompile(`^( *)([-*+]|\d{1,9}[.)]) `)

// tightenLists drops the blank line the converter puts between a list
// item's text and its nested list (<li>text<ul>…): in Markdown that line
// would make the list loose, a paragraph in every item, which the HTML
// did not have. A loose list keeps the blank lines between its items.
func tightenLists(md string) string {
	lines := strings.Split(md, "\n")
	out := lines[:0:0]
	for i, l := range lines {
		if strings.TrimSpace(l) == "" && i > 0 && i+1 < len(lines) {
			prev, next := listItem.FindStringSubmatch(lines[i-1]), listItem.FindStringSubmatch(lines[i+1])
			if prev != nil && next != nil && len(next[1]) > len(prev[1]) {
				continue
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// errNoText is a method that delivered an empty answer.
var errNoText = errors.New("it gave no text")

// readBy reads the finished answer by the first method that delivers a
// result the page agrees with (see checkResult), logging why each better
// one did not. When every method that delivered differs from the page,
// the first of them is kept, marked: the result is the best there is,
// and the task file says it differs. The text method is not tried after
// a difference, only when nothing else delivered: it is the check's own
// reference, so it would agree by construction and turn a Markdown
// answer into plain text without a word. check false leaves the comparison
// to the caller (a continued answer, whose parts the page shows
// otherwise). nw is the answer's network watch (nil: none); track has
// the element's reads while it streamed.
func (d *driver) readBy(ctx context.Context, nw *netWatch, track *answerTrack, check bool) (Answer, error) {
	var a Answer
	var first *Answer // the first result that differs from the page
	for _, m := range d.rs.methods {
		if m == MethodText && first != nil {
			break
		}
		text, format, think, err := d.readOne(ctx, m, nw, track)
		if err == nil && strings.TrimSpace(text) == "" {
			err = errNoText
		}
		if err != nil {
			if ctx.Err() != nil {
				return a, d.fail(ctx, "reading the answer: %w", err)
			}
			a.Fallbacks = append(a.Fallbacks, m+": "+err.Error())
			d.log.Warn("driver: reading the answer by "+m+" failed; trying the next method", "err", err)
			continue
		}
		if think == "" && (m == MethodNetwork || m == MethodCopy) {
			think = d.pageThinking(ctx) // the thinking is only on the page
		}
		if think == "" {
			think = d.keptThinking(ctx) // the page folded or removed it at the end
		}
		c := Answer{Text: strings.TrimSpace(text), Format: format, Method: m, Reasoning: strings.TrimSpace(think), Fallbacks: a.Fallbacks, CheckTook: a.CheckTook}
		if d.rs.noCheck {
			c.Check.State = CheckUnchecked
		}
		if !check || d.rs.noCheck {
			return c, nil
		}
		if d.afterRead != nil {
			d.afterRead(ctx)
		}
		began := time.Now()
		var behind bool
		c.Check, behind = d.pageCheck(ctx, c.Text, format)
		c.CheckTook += time.Since(began)
		a.CheckTook = c.CheckTook
		if c.Check.State != CheckDiffers {
			return c, nil
		}
		if behind {
			// The page shows only a beginning of it (a typing animation
			// that never shows its last characters): every method that
			// reads the page would give less. Kept, marked.
			c.Fallbacks = a.Fallbacks
			d.log.Warn("driver: the page shows only a beginning of the answer read by "+m+"; keeping it", "diff", c.Check.Diff)
			return c, nil
		}
		if m != MethodNetwork {
			// A page read can be a moment early: the response ended (the
			// proof) while the page still showed its streaming form (raw
			// Markdown, before the final render). The check waited for the
			// page to hold still, so the same method, read again now, reads
			// what the page settled on.
			if again, ok := d.reread(ctx, m, nw, track, c); ok {
				again.CheckTook = c.CheckTook + again.CheckTook
				a.CheckTook = again.CheckTook
				if again.Check.State != CheckDiffers {
					return again, nil
				}
			}
		}
		d.log.Warn("driver: the answer read by "+m+" differs from the page; trying the next method", "diff", c.Check.Diff)
		a.Fallbacks = append(a.Fallbacks, m+": differs from the page: "+c.Check.Diff)
		if first == nil || c.Check.lessLost(first.Check) {
			first = &c
		}
	}
	if first != nil {
		first.Fallbacks = a.Fallbacks
		d.log.Warn("driver: no method's answer matches the page; keeping the one that lost least", "method", first.Method, "diff", first.Check.Diff)
		return *first, nil
	}
	return a, nil // empty: the caller fails the attempt with the page's text
}

// reread reads by page method m once more after a check found c differs,
// and checks that read; ok is false when it reads nothing new.
func (d *driver) reread(ctx context.Context, m string, nw *netWatch, track *answerTrack, c Answer) (Answer, bool) {
	text, format, think, err := d.readOne(ctx, m, nw, track)
	text = strings.TrimSpace(text)
	if err != nil || text == "" || text == c.Text {
		return c, false
	}
	d.log.Info("driver: read by "+m+" again after the page settled", "diff", c.Check.Diff)
	if think = strings.TrimSpace(think); think == "" {
		think = c.Reasoning
	}
	again := Answer{Text: text, Format: format, Method: m, Reasoning: think, Fallbacks: c.Fallbacks}
	began := time.Now()
	again.Check, _ = d.pageCheck(ctx, text, format)
	again.CheckTook = time.Since(began)
	return again, true
}

// readOne reads the answer by method m: its text and format, and the
// thinking told apart from it.
func (d *driver) readOne(ctx context.Context, m string, nw *netWatch, track *answerTrack) (text, format, think string, err error) {
	switch m {
	case MethodNetwork:
		if nw == nil {
			return "", "", "", errors.New("no response was watched (the page was not sent from here)")
		}
		st := nw.state()
		if st.Seen && !st.Ended && !st.WS {
			st = nw.waitEnd(ctx, netEndWait) // the page showed its end first
		}
		switch {
		case !st.Seen:
			return "", "", "", fmt.Errorf("the page sent no request matching %q", nw.spec.URL)
		case st.WS && !st.Ended:
			// A socket stays open across answers: the page showed the
			// answer ended, and the frames so far are its answer.
		case !st.Ended:
			return "", "", "", errors.New("the response has not ended")
		case st.Failed != "":
			return "", "", "", fmt.Errorf("the response failed: %s", st.Failed)
		case st.BodyErr != nil:
			return "", "", "", fmt.Errorf("read the response body: %w", st.BodyErr)
		}
		text, think, err := extractBoth(nw.spec, st.Body)
		return text, FormatMarkdown, think, err
	case MethodCopy:
		if d.rs.copy == "" {
			return "", "", "", errors.New("the site names no copy button (copy:)")
		}
		text, err := d.readCopy(ctx)
		text, think := taskfile.SplitThink(text)
		return text, FormatMarkdown, think, err
	case MethodDOM:
		if track != nil && track.head != "" {
			return "", "", "", errors.New("the answer's top left the page while it streamed: its HTML is not whole")
		}
		v, err := d.answerView(ctx)
		if err != nil {
			return "", "", "", err
		}
		md, err := htmlToMarkdown(v.HTML)
		return md, FormatMarkdown, thinkMarkdown(v), err
	case MethodText:
		v, err := d.answerView(ctx)
		text := v.Text
		if track != nil {
			text = track.whole(text)
		}
		return text, FormatText, thinkMarkdown(v), err
	}
	return "", "", "", fmt.Errorf("unknown method %q", m)
}

// readSpecOf is how the site's answer is read and known to have ended:
// its keys done, copy, errorTurn, chrome, network and read.
func readSpecOf(site config.SiteConfig) readSpec {
	rs := readSpec{done: site.Done, copy: site.Copy, errorTurn: site.ErrorTurn, chrome: site.Chrome, strict: site.Verify == config.VerifyStrict, noCheck: site.Verify == config.VerifyOff}
	if site.Network != nil {
		n := site.Network.Resolved() // a named protocol's keys filled in
		rs.network = &n
	}
	rs.methods = orderMethods(site.Read, rs.network != nil, rs.copy != "")
	return rs
}

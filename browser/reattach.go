package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A web prompt is sent once (see taskfile.SendRecord). The driver records
// `sending` right before its click and `sent` with the conversation's URL
// once the page accepted the message; an attempt that finds such a record
// goes back to the conversation (reattach) and collects the answer
// instead of sending again. It sends again, in a new chat, only when the
// conversation no longer opens, does not hold our message, or shows no
// answer to it; or when the conversation is another account's.

// convKeys are the site keys a reattach reads.
type convKeys struct {
	// pattern matches the page's location once it shows a conversation
	// (`conversation`); nil: any location other than the site's url.
	pattern *regexp.Regexp
	// history matches the links to the account's conversations, newest
	// first (`history`): where an attempt that cannot tell whether it
	// sent looks for its message.
	history string
	// userMessage matches the user's messages in a conversation
	// (`userMessage`); without it our message is an element whose whole
	// text is our message (outside the input and the answers), never a
	// part of the page's text.
	userMessage string
	// notFound shows when a conversation no longer opens (`notFound`).
	notFound string
}

// sender is how the driver records the send (lanes.Job.RecordSend) and
// on whose account it runs; a driver without one (check --send) records
// nothing and never reattaches.
type sender struct {
	record  func(*taskfile.SendRecord, *taskfile.Delivery) error
	account string
	attempt int
}

// plan is how the send that follows a failed reattach is recorded.
type plan struct {
	how    taskfile.DeliveryHow
	reason string
	double bool // a possible double send: the earlier send's outcome is unknown
}

// noAnswerGrace bounds how long a reattached conversation that shows our
// message may take to show busy or an answer before it counts as "no
// answer to our message".
const noAnswerGrace = 10 * time.Second

// otherMessagesGrace is how long a conversation that shows user messages,
// none of them ours, may take to show ours (a page that renders its
// turns one by one) before it counts as not holding it.
const otherMessagesGrace = 2 * time.Second

// convState is what one look at a conversation page sees.
type convState struct {
	NotFound  bool   `json:"notFound"`
	Href      string `json:"href"`
	Ours      bool   `json:"ours"`    // our message is on the page
	Answers   int    `json:"answers"` // answer elements on the page
	After     int    `json:"after"`   // answer elements after our message
	Users     int    `json:"users"`   // user messages on the page (userMessage)
	Busy      bool   `json:"busy"`
	LoggedOut bool   `json:"loggedOut"`
}

func (d *driver) lookConv(ctx context.Context, text string) (convState, error) {
	s := d.site
	return chromedp.Run(ctx, chromedp.Evaluate[convState](`(() => {`+helpers+`
const norm = (s) => (s || '').replace(/[\s\u00a0\u200b\ufeff]+/g, ' ').trim();
const want = norm(`+js(text)+`);
const answers = qa(`+js(s.Answer)+`).els;
const um = `+js(d.conv.userMessage)+`;
let ours = null, users = 0;
if (um) { const us = qa(um).els; users = us.length; for (const u of us) if (norm(u.innerText || u.textContent) === want) ours = u; }
else if (want) {
  // No userMessage: an element whose whole text is our message, outside
  // the input and the answers; never a part of a longer text.
  const skip = (el) => el.closest('textarea,input,[contenteditable]:not([contenteditable=false])') || answers.some((a) => a.contains(el) || el.contains(a));
  for (const el of document.body.querySelectorAll('*')) if (norm(el.textContent) === want && norm(el.innerText) === want && !skip(el)) ours = el;
}
const after = !ours ? 0 : answers.filter((a) => ours.compareDocumentPosition(a) & Node.DOCUMENT_POSITION_FOLLOWING).length;
return {notFound: vis(q(`+js(d.conv.notFound)+`)), href: location.href, ours: !!ours, answers: answers.length, after, users,
  busy: vis(q(`+js(s.Busy)+`)), loggedOut: vis(q(`+js(s.LoggedOut)+`))};
})()`))
}

// conversationOf returns href if it is a conversation's location: it
// matches the site's `conversation` pattern, or, with none, differs from
// the site's url (fragment ignored). Otherwise "".
func (d *driver) conversationOf(href string) string {
	if href == "" {
		return ""
	}
	if d.conv.pattern != nil {
		if d.conv.pattern.MatchString(href) {
			return href
		}
		return ""
	}
	strip := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		u.Fragment = ""
		return strings.TrimSuffix(u.String(), "/")
	}
	if strip(href) == strip(d.site.URL) {
		return ""
	}
	return href
}

// foreignConversation says why u is not one of the site's conversations,
// or "" when it is: an http(s) URL of exactly the site url's origin that
// conversationOf accepts. It is asked before the browser is sent to a
// conversation, never after: a page once requested has run its script.
func (d *driver) foreignConversation(u string) string {
	cu, err := url.Parse(u)
	if err != nil {
		return "not a URL"
	}
	site, err := url.Parse(d.site.URL)
	if err != nil {
		return "the site's url is not a URL"
	}
	switch {
	case cu.Scheme != "http" && cu.Scheme != "https":
		return "scheme " + cu.Scheme + ": is not http(s)"
	case cu.User != nil:
		return "a URL with user info"
	case !strings.EqualFold(cu.Scheme, site.Scheme) || !strings.EqualFold(cu.Host, site.Host):
		return "origin " + cu.Scheme + "://" + cu.Host + " is not the site's (" + site.Scheme + "://" + site.Host + ")"
	case d.conversationOf(u) == "":
		return "not a conversation of the site (`conversation`)"
	}
	return ""
}

// sameConversation reports whether the tab's location href is still the
// conversation conv: the same origin and path (a query or fragment the
// page adds is not another conversation).
func sameConversation(href, conv string) bool {
	h, err1 := url.Parse(href)
	c, err2 := url.Parse(conv)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(h.Scheme, c.Scheme) && strings.EqualFold(h.Host, c.Host) &&
		strings.TrimSuffix(h.EscapedPath(), "/") == strings.TrimSuffix(c.EscapedPath(), "/")
}

// href is the tab's location, read again for up to a page load while the
// tab is between two pages (an evaluation fails while it navigates).
func (d *driver) href(ctx context.Context) (string, error) {
	deadline := time.Now().Add(d.t.PageLoad)
	for {
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return href, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.t.Poll):
		}
	}
}

// errLeftConversation cancels the reading of a reattached answer whose tab
// went to another page.
var errLeftConversation = errors.New("the page left the conversation")

// reattach is the start of an attempt whose task was sent before. It
// returns the answer and done=true when it collected it from the earlier
// conversation (nothing sent); done=false with the plan for sending again
// in a new chat; or the error that ends the attempt.
func (d *driver) reattach(ctx context.Context, prev *taskfile.SendRecord, text string) (ans Answer, done bool, p plan, err error) {
	p.how = taskfile.DeliveryResent
	if prev.Account != d.send.account {
		p.reason = fmt.Sprintf("the earlier send is in a conversation of account %s; this attempt runs on %s (web.reattachWait passed)", prev.Account, d.send.account)
		p.double = prev.State == taskfile.SendSending
		return Answer{}, false, p, nil
	}
	conv, found := prev.Conversation, ""
	if conv == "" {
		// Cut off between sending and the page's acceptance (or a page
		// that gave no conversation URL): look for our message.
		var why string
		conv, why, err = d.newestConversation(ctx)
		if err != nil {
			return Answer{}, false, p, err
		}
		if conv == "" {
			p.reason, p.double = why, prev.State == taskfile.SendSending
			return Answer{}, false, p, nil
		}
		found = "the earlier send's outcome was unknown; looked in the newest conversation of the history"
	}
	ans, seen, why, err := d.collect(ctx, conv, text, found)
	if err != nil || why == "" {
		return ans, err == nil, p, err
	}
	p.reason, p.double = why, prev.State == taskfile.SendSending && !seen
	return Answer{}, false, p, nil
}

// newestConversation opens the site and returns the URL of the first
// link its `history` matches, or "" and why not.
func (d *driver) newestConversation(ctx context.Context) (string, string, error) {
	if d.conv.history == "" {
		return "", "the earlier attempt was cut off between sending and the page's acceptance, and the site names no `history` to look for the message in", nil
	}
	d.stage("looking for the earlier send in the history")
	st, err := d.open(ctx)
	if err != nil {
		return "", "", err
	}
	if msg := d.limitMsg(st, ""); msg != "" {
		return "", "", d.limitErr(msg)
	}
	deadline := time.Now().Add(min(d.t.InputGrace, 5*time.Second))
	for {
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {`+helpers+`
const el = q(`+js(d.conv.history)+`); if (!el) return '';
const a = el.closest('a') || el.querySelector('a') || el; return a.href || '';
})()`))
		if err != nil {
			return "", "", d.fail(ctx, "read history: %w", err)
		}
		if href != "" {
			d.step("newest conversation in the history", "url", href)
			return href, "", nil
		}
		if time.Now().After(deadline) {
			return "", "the earlier attempt was cut off between sending and the page's acceptance, and the history lists no conversation", nil
		}
		select {
		case <-ctx.Done():
			return "", "", d.fail(ctx, "read history: %w", context.Cause(ctx))
		case <-time.After(d.t.Poll):
		}
	}
}

// collect opens conversation conv and, if it holds our message with an
// answer (finished or still coming), records the reattach and returns
// the answer, read as a fresh one is. Otherwise it returns why not
// (why != ""; seen: our message was there).
func (d *driver) collect(ctx context.Context, conv, text, found string) (ans Answer, seen bool, why string, err error) {
	if why := d.foreignConversation(conv); why != "" {
		d.log.Warn("driver: refused to open a conversation that is not one of the site's", "url", conv, "why", why)
		return Answer{}, false, "the recorded conversation is not one of the site's (" + why + "): not opened", nil
	}
	d.stage("reattaching to the conversation")
	if _, err := d.openURL(ctx, conv); err != nil {
		if ctx.Err() != nil || attempt.Classify(err) == taskfile.ClassAccount {
			return Answer{}, false, "", err
		}
		return Answer{}, false, "the conversation no longer opens: " + err.Error(), nil
	}
	var cs convState
	var ourSeen time.Time
	loaded := time.Now()
	for attached := false; !attached; {
		cs, err = d.lookConv(ctx, text)
		if err != nil {
			return Answer{}, false, "", d.fail(ctx, "read the conversation: %w", err)
		}
		now := time.Now()
		switch {
		case cs.LoggedOut:
			return Answer{}, false, "", d.signedOut()
		case cs.NotFound:
			return Answer{}, false, "the conversation no longer opens (the site shows notFound)", nil
		case !sameConversation(cs.Href, conv):
			return Answer{}, false, "the conversation no longer opens (the page went to " + cs.Href + ")", nil
		case cs.Ours && (cs.Busy || cs.After > 0):
			attached = true
			continue
		case cs.Ours && ourSeen.IsZero():
			ourSeen = now
		case cs.Ours && now.Sub(ourSeen) > noAnswerGrace:
			return Answer{}, true, "the conversation shows no answer to our message", nil
		case !cs.Ours && now.Sub(loaded) > d.t.InputGrace,
			!cs.Ours && cs.Users > 0 && now.Sub(loaded) > otherMessagesGrace:
			return Answer{}, false, "the conversation does not show our message", nil
		}
		select {
		case <-ctx.Done():
			return Answer{}, false, "", d.fail(ctx, "read the conversation: %w", context.Cause(ctx))
		case <-time.After(d.t.Poll):
		}
	}
	d.beat()
	if cs.After > 0 && !cs.Busy && d.rs.errorTurn != "" {
		// The answer to our message is the site's error turn: nothing
		// to collect, and its Retry button is never pressed.
		if st, err := d.look(ctx); err == nil && st.ErrTurn {
			return Answer{}, true, "the conversation's answer to our message is the site's error turn", nil
		}
	}
	var rec *taskfile.SendRecord
	if found != "" {
		// The message was found by looking: from now on it is a send
		// whose conversation is known.
		rec = &taskfile.SendRecord{State: taskfile.SendSent, Attempt: d.send.attempt, Account: d.send.account, Conversation: conv}
	}
	del := &taskfile.Delivery{Attempt: d.send.attempt, How: taskfile.DeliveryReattached, Account: d.send.account, Conversation: conv, Reason: found}
	if err := d.send.record(rec, del); err != nil {
		return Answer{}, true, "", err
	}
	d.step("reattached", "conversation", conv, "busy", cs.Busy, "answers", cs.After)
	// The answer is read as a fresh one is, from the answers after ours,
	// and only while the tab shows this conversation: a page that goes
	// elsewhere (another conversation of the account) ends the reading.
	before := pageState{Count: cs.Answers - cs.After}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	left := ""
	d.watch = func(ctx context.Context, _ pageState) {
		if href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`)); err == nil && !sameConversation(href, conv) {
			left = href
			cancel(errLeftConversation)
		}
	}
	ans, err = d.awaitAnswer(rctx, before, nil) // the response began before this tab watched: not by network
	d.watch = nil
	if left == "" && ctx.Err() == nil {
		// The last look may have come before the page left, or failed
		// because it was leaving ("target navigated").
		href, herr := d.href(ctx)
		if herr != nil && err == nil {
			return Answer{}, true, "", d.fail(ctx, "read the conversation: %w", herr)
		}
		if herr == nil && !sameConversation(href, conv) {
			left = href
		}
	}
	if left != "" && ctx.Err() == nil {
		d.log.Warn("driver: the page left the reattached conversation; its answer is not taken", "conversation", conv, "went", left)
		return Answer{}, false, "the conversation no longer opens (the page went to " + left + " while the answer was read)", nil
	}
	return ans, true, "", err
}

// recordSending writes the `sending` record right before the click.
func (d *driver) recordSending(p plan) error {
	if d.send.record == nil {
		return nil
	}
	now := time.Now()
	rec := &taskfile.SendRecord{State: taskfile.SendSending, Attempt: d.send.attempt, Account: d.send.account, SendingAt: now}
	del := &taskfile.Delivery{Attempt: d.send.attempt, How: p.how, Account: d.send.account, Reason: p.reason, PossibleDoubleSend: p.double}
	d.withAttached(del)
	d.sending, d.delivery = rec, del
	return d.send.record(rec, del)
}

// watchSent is installed once the click went out: on each look at the
// page it records `sent` as soon as the page accepted the message (a
// conversation's location, busy or a new answer), with the URL, and once
// more when the URL shows only later.
func (d *driver) watchSent(before pageState) func(context.Context, pageState) {
	recorded := false
	return func(ctx context.Context, st pageState) {
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		if err != nil {
			return
		}
		conv := d.conversationOf(href)
		if conv == "" && (recorded || !(st.Busy || st.Count > before.Count)) {
			return
		}
		rec := *d.sending
		rec.State, rec.SentAt, rec.Conversation = taskfile.SendSent, time.Now(), conv
		del := *d.delivery
		del.Conversation = conv
		if err := d.send.record(&rec, &del); err != nil {
			d.watch = nil // the runner logged it (and stops a fenced attempt)
			return
		}
		recorded = true
		if conv != "" {
			d.step("the page accepted the message", "conversation", conv)
			d.watch = nil
		}
	}
}

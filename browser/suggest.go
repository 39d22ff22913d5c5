// This file holds --suggest itself: its report types, the run that opens
// the page, finds each key's element and sends the probe, and the
// watching of the probe's answer (waitRest, probeAnswer, quietFor).

package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/spool/config"
)

// DefaultProbe is the probe `--probe` sends: it asks for a structured
// answer, a short Markdown document, not a greeting. A reasoning model
// thinks at length before answering a greeting in a line, and its
// thinking is then the longest new text on the page; a document of its
// own (a heading, a list, a code block) is what tasks ask for, so the
// answer's element, a done that must stay away from the code block's
// own buttons, and a busy that lasts to the stream's end are all tried.
const DefaultProbe = "Write a short Markdown document about spool folders: a heading, two bullet points and a one-line code block."

// Suggestion is what --suggest proposes for one key.
type Suggestion struct {
	Key        string      `json:"key"`
	Selector   string      `json:"selector,omitempty"` // "" when nothing was found
	Confidence string      `json:"confidence"`         // high, medium, low, or none
	Why        string      `json:"why"`
	Current    string      `json:"current,omitempty"` // the config's selector: ok, matches nothing, ...
	Others     []Candidate `json:"others,omitempty"`  // the next best, at most 3
	// Network is the `network` key's value (Selector then shows it as
	// the block writes it).
	Network *config.SiteNetwork `json:"network,omitempty"`
	// List is a list key's value (artifactsFrom).
	List []string `json:"list,omitempty"`
}

// SuggestReport is what Suggest found on the page.
type SuggestReport struct {
	Site   string       `json:"site"`
	URL    string       `json:"url"`
	Keys   []Suggestion `json:"keys"`
	Probe  string       `json:"probe,omitempty"`
	Answer string       `json:"answer,omitempty"` // the probe's answer as the page shows it
	// NetAnswer is the probe's answer as the response of the suggested
	// network key carried it.
	NetAnswer string `json:"netAnswer,omitempty"`
	Second    string `json:"second,omitempty"` // the second probe and its answer (confirm)
	// Thinking: the probe's answer came with a thinking block (a
	// reasoning page).
	Thinking bool     `json:"thinking,omitempty"`
	Problems []string `json:"problems,omitempty"`
}

// Get returns the suggestion for key.
func (r *SuggestReport) Get(key string) (Suggestion, bool) {
	for _, s := range r.Keys {
		if s.Key == key {
			return s, true
		}
	}
	return Suggestion{}, false
}

// SuggestOptions shape a Suggest.
type SuggestOptions struct {
	Show bool
	Send string // a probe message: with it answer, busy, done, copy and error are looked for
	// Picture also sends PictureProbe (after Send's probes) and proposes
	// artifactsFrom from the pictures of its answer (suggest_artifacts.go).
	Picture bool
	Profile string
	Log     *slog.Logger
	Timings Timings
}

// found is one key's element as the page found it.
type found struct {
	Found bool        `json:"found"`
	What  string      `json:"what"`
	Why   string      `json:"why"`
	Sure  int         `json:"sure"`
	Text  string      `json:"text"`
	Cands []Candidate `json:"cands"`
}

type restKeys struct {
	Input   found `json:"input"`
	Send    found `json:"send"`
	NewChat found `json:"newChat"`
}

type probeKeys struct {
	User   string   `json:"user"`
	Answer found    `json:"answer"`
	Busy   found    `json:"busy"`
	Done   found    `json:"done"`
	Copy   found    `json:"copy"`
	Error  found    `json:"error"`
	Gone   []string `json:"gone"`
	MaxGap float64  `json:"maxGap"` // ms: the longest pause of the answer while it grew
	// Thinking: the answer's bubble had a thinking block (a reasoning page).
	Thinking bool `json:"thinking"`
	// Watch is, per watched selector (SG.arm), "ok" when this probe
	// confirmed it, else why not.
	Watch map[string]string `json:"watch"`
	// Seen is when each watched selector showed (ms after the send);
	// Wall0 the send's time (ms since the epoch), FirstGrowth and
	// LastGrowth the text's (ms after the send).
	Seen                           map[string]struct{ First, Last float64 } `json:"seen"`
	Wall0, FirstGrowth, LastGrowth float64
	// GrowEvents is how many times the page's text grew: far more than
	// the stream's pieces when the page types the answer out itself.
	GrowEvents int `json:"growEvents"`
}

type progress struct {
	Grew       bool    `json:"grew"`
	SinceGrow  float64 `json:"sinceGrowth"`
	Elapsed    float64 `json:"elapsed"`
	Indicators int     `json:"indicators"`
}

// sgEval evaluates one call of the suggestion engine on the page.
func sgEval[T any](ctx context.Context, call string) (T, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(lctx, chromedp.Evaluate[T](`(() => {`+suggestJS+`
return `+call+`;
})()`))
}

// SiteKeyKnown reports whether the config has the site key (yaml name):
// a suggestion for a key the config cannot take (done and copy before
// they exist) is reported but kept out of the block.
func SiteKeyKnown(key string) bool {
	t := reflect.TypeOf(config.SiteConfig{})
	for i := range t.NumField() {
		if strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0] == key {
			return true
		}
	}
	return false
}

// suggestOnce is Suggest with the probe it was given.
func suggestOnce(ctx context.Context, cfg *config.Config, name string, sc config.SiteConfig, opts SuggestOptions) (*SuggestReport, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if sc.URL == "" {
		return nil, errors.New("the site has no url")
	}
	tab, closeTab, err := openTab(ctx, cfg, opts.Profile, opts.Show, log)
	if err != nil {
		return nil, err
	}
	defer closeTab()
	rep := &SuggestReport{Site: name, URL: sc.URL, Probe: opts.Send}
	d := newDriver(config.SiteConfig{URL: sc.URL}, name, opts.Timings, log)
	sockets, err := startSocketLog(tab) // a socket the page opens as it loads may carry the answer
	if err != nil {
		return nil, err
	}
	if err := chromedp.Do(tab, chromedp.Navigate(sc.URL)); err != nil {
		return nil, fmt.Errorf("open %s: %w", sc.URL, err)
	}
	rest, err := waitRest(tab, d)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	add := func(key string, f found, why string) Suggestion {
		s := Suggestion{Key: key, Confidence: "none", Why: why}
		if f.Found && len(f.Cands) > 0 {
			rc := rankCandidates(key, f.Cands)
			best := rc[0]
			s.Selector = best.Selector
			s.Confidence = confidence(key, best, f)
			s.Why = strings.TrimSpace(strings.Join(nonEmpty(f.What, f.Why), "; ") + "; selector by " + strings.Join(best.Notes, " + "))
			s.Others = rc[1:min(len(rc), 4)]
		} else if f.Found {
			s.Why = f.What + "; but no selector picks it out alone"
		}
		rep.Keys = append(rep.Keys, s)
		return s
	}
	in := add("input", rest.Input, "no visible text field, contenteditable or role=textbox")
	var nc found = rest.NewChat
	if in.Selector == "" {
		rep.Problems = append(rep.Problems, "no message field found: is the page signed in? (`spoolgate login "+name+"`)")
		add("send", found{}, "no field to look beside")
		add("newChat", nc, "no button named new chat")
		return rep, nil
	}
	// Type (the probe, or a word to clear again): a send button that shows
	// or enables only once the field holds text is found that way.
	d.site.Input = in.Selector
	if _, err := sgEval[int](tab, `SG.keepBefore()`); err != nil {
		return nil, fmt.Errorf("read the page: %w", err)
	}
	probe := opts.Send
	if probe == "" {
		probe = "spoolgate"
	}
	if _, err := d.setText(tab, "input", in.Selector, probe); err != nil {
		rep.Problems = append(rep.Problems, "typing into the field failed: "+err.Error())
	}
	typed, err := sgEval[restKeys](tab, `SG.rest(true)`)
	if err != nil {
		return nil, fmt.Errorf("read the page: %w", err)
	}
	add("send", typed.Send, "no button beside the field")
	sendSel := configSend(tab, sc.Send, &rep.Keys[len(rep.Keys)-1])
	add("newChat", nc, "no button named new chat (optional: without it each task goes on in the current chat)")
	if opts.Send == "" || sendSel == "" {
		if _, err := d.setText(tab, "input", in.Selector, ""); err != nil {
			log.Warn("suggest: could not clear the field", "err", err)
		}
		if opts.Send != "" {
			rep.Problems = append(rep.Problems, "no send button found: the probe was not sent")
		}
		rep.current(tab, sc)
		return rep, nil
	}
	nw, err := startNetProbe(tab, sockets)
	if err != nil {
		return nil, fmt.Errorf("watch the page's responses: %w", err)
	}
	defer nw.Stop()
	watch := map[string]string{"answer": sc.Answer, "busy": sc.Busy, "done": sc.Done, "copy": sc.Copy, "thinking": sc.Thinking}
	pk, err := probeAnswer(tab, d, sendSel, opts.Send, watch)
	if err != nil {
		return nil, err
	}
	if !pk.Answer.Found {
		rep.Problems = append(rep.Problems, "the probe message brought no answer that could be told apart from the page")
	}
	rep.Answer, rep.Thinking = pk.Answer.Text, pk.Thinking
	add("answer", pk.Answer, "no new text grew after the send")
	var end time.Time // the end of the response that carried the answer
	if pk.Answer.Found {
		ns, text := netFor(tab, nw, pk.Answer.Text)
		ns.Current, rep.NetAnswer = netCurrent(sc.Network, ns), text
		if ns.Current != "ok" && netPasses(sc.Network, nw.states(), text, pk.Answer.Text) {
			// The config's own network key reads this probe's answer
			// too: it is kept, never traded for another (--write).
			ns.Current = "ok"
			ns.Why += "; the config's network key reads this probe's answer as well, and is kept"
		}
		rep.Keys = append(rep.Keys, ns)
		end = netEnd(nw.states(), ns.Network)
		if f := thinkingBeside(tab, nw.states(), ns.Network); f.Found {
			add("thinking", f, "")
		}
	}
	busy := add("busy", pk.Busy, "nothing showed only while the answer grew: the answer's end is judged by quiet alone")
	if b := &rep.Keys[len(rep.Keys)-1]; b.Selector != "" && !spansStream(pk, b.Selector, end) {
		if pk.Thinking || netThinks(rep) {
			// A reasoning page's spinner that goes with the thinking,
			// while the answer still streams: never a busy.
			b.Why = fmt.Sprintf("%s showed after the send but went before the stream's end (a thinking spinner?): no busy", pk.Busy.What)
			b.Selector, b.Confidence, b.Others, busy = "", "none", nil, *b
		} else {
			b.Confidence, b.Why = "low", b.Why+"; it was not there from the send to the stream's end"
		}
	}
	if busy.Selector == "" && len(pk.Gone) > 0 {
		rep.Keys[len(rep.Keys)-1].Why += " (shown and gone, but not to be picked out: " + strings.Join(pk.Gone, ", ") + ")"
	}
	if q, why := quietFor(pk, busy); q > 0 {
		rep.Keys = append(rep.Keys, Suggestion{Key: "quiet", Selector: q.String(), Confidence: "medium", Why: why})
	}
	add("done", pk.Done, "nothing showed under the answer only once it was finished")
	add("copy", pk.Copy, "no copy button under the answer")
	add("error", pk.Error, "the page showed no error during the probe (optional)")
	pk.busyVerdict(end)
	rep.judgeCurrent(pk.Watch, sc.Thinking)
	if err := rep.confirm(tab, d, nw, in.Selector, sendSel); err != nil {
		return nil, err
	}
	if ans, _ := rep.Get("answer"); opts.Picture && ans.Selector != "" {
		if err := rep.probePicture(tab, d, in.Selector, sendSel, ans.Selector); err != nil {
			return nil, err
		}
	}
	rep.current(tab, sc)
	return rep, nil
}

// current notes, per key the page found, whether sc's own selector
// still finds the same element.
func (r *SuggestReport) current(tab context.Context, sc config.SiteConfig) {
	cur := map[string]string{"input": sc.Input, "send": sc.Send, "newChat": sc.NewChat, "answer": sc.Answer}
	res, err := sgEval[map[string]string](tab, `SG.current(`+js(cur)+`)`)
	if err != nil {
		return
	}
	for i := range r.Keys {
		if c, ok := res[r.Keys[i].Key]; ok && r.Keys[i].Current == "" {
			r.Keys[i].Current = c
		}
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// waitRest waits for the page to show a message field (up to the input
// grace after the page has loaded) and returns the keys found at rest.
func waitRest(tab context.Context, d *driver) (restKeys, error) {
	clock := newLoadClock(d.t, time.Now())
	for {
		rk, err := sgEval[restKeys](tab, `SG.rest(false)`)
		if err == nil && rk.Input.Found {
			return rk, nil
		}
		ready, _ := sgEval[bool](tab, `document.readyState === 'complete'`)
		now := time.Now()
		if ready {
			clock.ready(now)
		}
		if clock.graceOver(now) || clock.expired(now) {
			return rk, err
		}
		select {
		case <-tab.Done():
			return rk, context.Cause(tab)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// probeAnswer sends the typed probe and watches the page until its text
// has stopped growing (and nothing that showed while it grew still
// shows), then reads what the probe left, and judges each of watch's
// selectors (key: selector) by it.
func probeAnswer(tab context.Context, d *driver, sendSel, probe string, watch map[string]string) (probeKeys, error) {
	if _, err := sgEval[bool](tab, `SG.arm(`+js(probe)+`, `+js(watch)+`)`); err != nil {
		return probeKeys{}, fmt.Errorf("watch the page: %w", err)
	}
	if _, err := d.click(tab, sendSel); err != nil {
		return probeKeys{}, fmt.Errorf("click send: %w", err)
	}
	sent := time.Now()
	nudged := false
	for {
		p, err := sgEval[progress](tab, `SG.progress()`)
		if err != nil {
			return probeKeys{}, fmt.Errorf("watch the page: %w", err)
		}
		switch {
		case p.Grew && p.SinceGrow >= 4000 && p.Indicators == 0, p.Grew && p.SinceGrow >= 10000:
			return sgEval[probeKeys](tab, `SG.finish()`)
		case !p.Grew && time.Since(sent) > d.t.Start:
			return sgEval[probeKeys](tab, `SG.finish()`)
		case !p.Grew && !nudged && time.Since(sent) > 2*time.Second:
			nudged = true
			_ = d.jsClick(tab, sendSel, "q")
		}
		select {
		case <-tab.Done():
			return probeKeys{}, context.Cause(tab)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// quietFor proposes a `quiet` longer than the default 1 s when the probe
// showed that one would cut the answer: the answer paused that long
// while it grew, or went on growing after the busy element went (pages
// that animate their text). Twice the longest such time, in whole
// seconds.
func quietFor(pk probeKeys, busy Suggestion) (time.Duration, string) {
	gap := time.Duration(pk.MaxGap) * time.Millisecond
	why := fmt.Sprintf("the answer paused for up to %s while it streamed", gap.Round(10*time.Millisecond))
	for _, c := range pk.Busy.Cands {
		if c.Selector == busy.Selector && time.Duration(c.Lag)*time.Millisecond > gap {
			gap = time.Duration(c.Lag) * time.Millisecond
			why = fmt.Sprintf("the answer still grew for %s after busy went", gap.Round(10*time.Millisecond))
		}
	}
	q := (2*gap + time.Second - 1).Truncate(time.Second)
	if n := utf8.RuneCountInString(pk.Answer.Text); n > 0 && pk.GrowEvents*4 >= n && q < 2*time.Second {
		// About a character per step: a typing animation on timers of
		// its own, whose last characters may come after busy went on a
		// loaded machine.
		q, why = 2*time.Second, fmt.Sprintf("the page typed the answer out in %d steps for %d characters (an animation of its own)", pk.GrowEvents, n)
	}
	if q <= time.Second {
		return 0, ""
	}
	return q, why + "; the default 1s would cut it"
}

package browser

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// KeyCheck is what one site key's selector matches on the page.
type KeyCheck struct {
	Key      string `json:"key"`
	Selector string `json:"selector"`
	Found    bool   `json:"found"`
	Visible  bool   `json:"visible"`
	Shadow   int    `json:"shadow"` // see qa: open shadow roots searched, -1 for >>>
	Bad      string `json:"bad,omitempty"`
	// Must: the key must match on a page that is ready (input, send, and
	// newChat and promptInput when set); the others show only at times.
	Must bool `json:"must"`
}

// Note says what the look means, for the one line `check` prints.
func (k KeyCheck) Note() string {
	switch {
	case k.Bad != "":
		return "not a valid selector: " + k.Bad
	case k.Found && k.Shadow != 0:
		return "found, in an open shadow root" + hiddenNote(k.Visible)
	case k.Found:
		return "found" + hiddenNote(k.Visible)
	}
	s := "not found (" + shadowNote(k.Shadow) + ")"
	if !k.Must {
		s += "; " + absentNote[k.Key]
	}
	return s
}

func hiddenNote(visible bool) string {
	if visible {
		return ""
	}
	return ", hidden"
}

// absentNote says why an optional key may match nothing on a page at rest.
var absentNote = map[string]string{
	"answer":    "no answer on the page yet: --send checks it",
	"busy":      "shows only while an answer streams: --send checks it",
	"loggedOut": "shows only when signed out",
	"error":     "shows only on a page error",
	"limited":   "shows only at a usage limit",
	"continue":  "shows only after a cut-off answer",
	"done":      "shows only under a finished answer: --send checks it",
	"copy":      "shows only under a finished answer: --send checks it",
	"errorTurn": "shows only in an error turn",
	"thinking":  "shows only with a reasoning answer: --send checks it",
	"upload":    "a task with attachments: would fail here",
	"attached":  "shows only once a file is attached",
	"challenge": "shows only on a challenge page",
}

// CheckReport is what Check saw.
type CheckReport struct {
	Site     string     `json:"site"`
	URL      string     `json:"url"`
	Keys     []KeyCheck `json:"keys"`
	SignedIn bool       `json:"signedIn"`
	Limited  string     `json:"limited,omitempty"` // the usage-limit message shown
	Ready    bool       `json:"ready"`
	Problems []string   `json:"problems,omitempty"` // why it is not ready, one per key or state
	Answer   string     `json:"answer,omitempty"`   // --send: the answer, as a task would get it
	SendErr  string     `json:"sendError,omitempty"`
	// Reading is how the answer is read and known to have ended.
	Reading CheckReading `json:"reading"`
	// Modes are the site's page modes, each control as the page shows it.
	Modes []ModeCheck `json:"modes,omitempty"`
	// Reasoning (--send): the thinking told apart from the answer.
	Reasoning string `json:"reasoning,omitempty"`
}

// ModeCheck is one of the site's page modes as check found its control.
type ModeCheck struct {
	Mode     string `json:"mode"`
	Kind     string `json:"kind"` // switch or menu
	Selector string `json:"selector"`
	State    string `json:"state,omitempty"` // a switch: how its state reads
	Found    bool   `json:"found"`
	On       bool   `json:"on,omitempty"` // a switch: it reads on
	Shown    string `json:"shown"`        // the attribute or class it read, or the menu's chosen label
}

// Note says what the look means, for the one line `check` prints.
func (m ModeCheck) Note() string {
	switch {
	case !m.Found:
		return "NOT FOUND: a model that names this mode fails as environment"
	case m.Kind == "menu":
		return fmt.Sprintf("found, chosen %q", m.Shown)
	}
	return fmt.Sprintf("found, reads %s (%s)", onOff(m.On), m.Shown)
}

// lookModes reads each page mode's control as the page shows it now.
func (d *driver) lookModes(ctx context.Context) ([]ModeCheck, error) {
	var out []ModeCheck
	for _, name := range slices.Sorted(maps.Keys(d.site.Modes)) {
		m := d.site.Modes[name]
		c := ModeCheck{Mode: name, Kind: "switch", Selector: m.Switch, State: m.State}
		if m.Switch == "" {
			c.Kind, c.Selector = "menu", m.Menu
			if m.Chosen != "" {
				c.Selector = m.Chosen
			}
		}
		r, err := d.readMode(ctx, c.Selector, c.State)
		if err != nil {
			return nil, err
		}
		c.Found, c.On, c.Shown = r.Found, r.On, r.Shown
		out = append(out, c)
	}
	return out, nil
}

// CheckReading is how check read (or would read) the site's answer.
type CheckReading struct {
	Methods []string `json:"methods"`          // the methods in the order tried
	Ends    []string `json:"ends"`             // the positive end signals the site names
	Note    string   `json:"note,omitempty"`   // e.g. that quiet alone decides
	Method  string   `json:"method,omitempty"` // --send: the method that delivered
	Format  string   `json:"format,omitempty"`
	EndedBy string   `json:"endedBy,omitempty"`
	Signals []string `json:"signals,omitempty"` // --send: every completion signal seen, with its time since send
	// Check and CheckDiff (--send): how the answer compares with what the
	// page showed (see checkResult).
	Check     string `json:"check,omitempty"`
	CheckDiff string `json:"checkDiff,omitempty"`
	// Fallbacks say why a better method did not deliver.
	Fallbacks []string `json:"fallbacks,omitempty"`
}

// CheckOptions shape a Check.
type CheckOptions struct {
	Show    bool   // a visible window instead of headless
	Send    string // if set, send this message and wait for the answer
	Timings Timings
	Log     *slog.Logger // the driver's steps, with their times
	// Profile is the web session's profile to open; default: the first
	// session's (ProfileDir).
	Profile string
}

// Check opens the site in this instance's profile and reports, for every
// selector key of the site, whether it matches, and whether the page
// reads as signed in, limited, and ready for a task; with opts.Send it
// also sends one message and waits for the answer. The caller holds the
// web-runner lock, as for Login.
func Check(ctx context.Context, cfg *config.Config, site string, opts CheckOptions) (*CheckReport, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc, ok := cfg.Sites[site]
	if !ok {
		return nil, fmt.Errorf("site %q is not in the config", site)
	}
	tab, closeTab, err := openTab(ctx, cfg, opts.Profile, opts.Show, log)
	if err != nil {
		return nil, err
	}
	defer closeTab()

	d := newDriver(sc, site, opts.Timings, log)
	rep := &CheckReport{Site: site, URL: sc.URL, Reading: d.reading()}
	st, openErr := d.open(tab)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	keys, err := d.lookKeys(tab)
	if err != nil {
		return nil, fmt.Errorf("read the page: %w", err)
	}
	rep.Keys = keys
	if rep.Modes, err = d.lookModes(tab); err != nil {
		return nil, fmt.Errorf("read the page's modes: %w", err)
	}
	for _, m := range rep.Modes {
		if !m.Found {
			rep.Problems = append(rep.Problems, fmt.Sprintf("mode %s: %s %q: %s", m.Mode, m.Kind, m.Selector, m.Note()))
		}
	}
	rep.SignedIn = st.signedIn()
	rep.Limited = d.limitMsg(st, "")
	for _, k := range keys {
		if k.Bad != "" || (k.Must && !k.Found) {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s %q: %s", k.Key, k.Selector, k.Note()))
		}
	}
	switch {
	case st.LoggedOut:
		rep.Problems = append(rep.Problems, fmt.Sprintf("the page shows its signed-out link (loggedOut %q): run `spoolgate login %s`", sc.LoggedOut, site))
	case rep.Limited != "":
		rep.Problems = append(rep.Problems, "the page shows a usage limit: "+rep.Limited)
	case openErr != nil && len(rep.Problems) == 0:
		rep.Problems = append(rep.Problems, openErr.Error())
	}
	rep.Ready = len(rep.Problems) == 0
	if rep.Ready && opts.Send != "" {
		model := &config.ModelConfig{Name: "check", Site: site}
		ans, err := d.chat(tab, model, &taskfile.Task{TaskID: "check", Content: opts.Send})
		if err != nil {
			rep.SendErr = err.Error()
			rep.Problems = append(rep.Problems, "sending a message failed: "+err.Error())
			rep.Ready = false
		} else {
			rep.Answer, rep.Reasoning = ans.Text, ans.Reasoning
			rep.Reading.Method, rep.Reading.Format, rep.Reading.EndedBy = ans.Method, ans.Format, ans.EndedBy
			rep.Reading.Signals, rep.Reading.Fallbacks = ans.Signals, ans.Fallbacks
			rep.Reading.Check, rep.Reading.CheckDiff = ans.Check.State, ans.Check.Diff
		}
	}
	return rep, nil
}

// openTab launches the browser on profile (default: the first
// session's) after the self-check, as a task would, and returns its tab,
// which ends with ctx; closeTab closes the browser.
func openTab(ctx context.Context, cfg *config.Config, profile string, show bool, log *slog.Logger) (tab context.Context, closeTab func(), err error) {
	if profile == "" {
		profile = ProfileDir(cfg)
	}
	b, err := launchChecked(ctx, cfg, profile, !show, log)
	if err != nil {
		return nil, nil, err
	}
	tab, cancel := context.WithCancel(b.Context())
	stop := context.AfterFunc(ctx, cancel)
	return tab, func() { stop(); cancel(); b.Close() }, nil
}

// launchChecked launches the browser on profile after the checks a task
// makes first (the folder, the self-check, the single-instance check),
// for the commands that open a profile outside a task (check, suggest,
// login).
func launchChecked(ctx context.Context, cfg *config.Config, profile string, headless bool, log *slog.Logger) (*Browser, error) {
	if err := ensureProfile(profile); err != nil {
		return nil, err
	}
	if err := SelfCheck(profile, log); err != nil {
		return nil, err
	}
	if err := checkSingleInstance(profile, log); err != nil {
		return nil, err
	}
	return Launch(ctx, cfg, profile, headless, log)
}

// siteKeys are the selector keys of a site, in the order check prints.
func siteKeys(s config.SiteConfig) []KeyCheck {
	all := []KeyCheck{
		{Key: "input", Selector: s.Input, Must: true},
		{Key: "send", Selector: s.Send, Must: true},
		{Key: "answer", Selector: s.Answer},
		{Key: "busy", Selector: s.Busy},
		{Key: "loggedOut", Selector: s.LoggedOut},
		{Key: "newChat", Selector: s.NewChat, Must: true},
		{Key: "promptInput", Selector: s.PromptInput, Must: true},
		{Key: "error", Selector: s.Error},
		{Key: "limited", Selector: s.Limited},
		{Key: "continue", Selector: s.Continue},
		{Key: "done", Selector: s.Done},
		{Key: "copy", Selector: s.Copy},
		{Key: "errorTurn", Selector: s.ErrorTurn},
		{Key: "thinking", Selector: s.Thinking},
		{Key: "upload", Selector: s.Upload},
		{Key: "attached", Selector: s.Attached},
		{Key: "challenge", Selector: s.Challenge},
	}
	var out []KeyCheck
	for _, k := range all {
		if k.Selector != "" {
			out = append(out, k)
		}
	}
	return out
}

// lookKeys looks up every key of the site on the page as it is now.
func (d *driver) lookKeys(ctx context.Context) ([]KeyCheck, error) {
	keys := siteKeys(d.site)
	sels := make([]string, len(keys))
	for i, k := range keys {
		sels[i] = k.Selector
	}
	type found struct {
		Found   bool   `json:"found"`
		Visible bool   `json:"visible"`
		Shadow  int    `json:"shadow"`
		Bad     string `json:"bad"`
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := chromedp.Run(lctx, chromedp.Evaluate[[]found](`(() => {`+helpers+`
return `+js(sels)+`.map((s) => { const r = qa(s); return {found: r.els.length > 0, visible: vis(r.els[0]), shadow: r.shadow, bad: r.bad || ''}; });
})()`))
	if err != nil {
		return nil, err
	}
	for i := range keys {
		if i < len(res) {
			keys[i].Found, keys[i].Visible, keys[i].Shadow, keys[i].Bad = res[i].Found, res[i].Visible, res[i].Shadow, res[i].Bad
		}
	}
	return keys, nil
}

// reading is how the driver reads this site's answer, before any send.
func (d *driver) reading() CheckReading {
	r := CheckReading{Methods: d.rs.methods}
	if d.rs.network != nil {
		r.Ends = append(r.Ends, "network: the response to "+d.rs.network.URL+" ends")
	}
	if d.rs.done != "" {
		r.Ends = append(r.Ends, fmt.Sprintf("done: %q shows under the answer", d.rs.done))
	}
	if len(r.Ends) == 0 {
		r.Note = fmt.Sprintf("the site names no positive end signal (done: or network:): an answer ends when it has held still for quiet (%s), so a pause that long ends it early", d.t.Quiet)
	}
	return r
}

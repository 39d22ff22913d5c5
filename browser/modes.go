package browser

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// modeWait bounds how long a mode's control may take to show its new
// state after a click (a switch's re-render, a menu's opening).
const modeWait = 3 * time.Second

// modeRead is a mode control's state as the page shows it.
type modeRead struct {
	Found bool   `json:"found"`
	On    bool   `json:"on"`    // a switch: on
	Shown string `json:"shown"` // what the page shows: the switch's attribute or class list, the menu's chosen label
}

// readModeJS reads a mode's control: a switch's state by its State rule,
// or a menu's chosen label (Chosen, else Menu).
const readModeJS = `((sel, state) => {
const el = q(sel);
if (!el) return {found: false, on: false, shown: ''};
if (state === '') return {found: true, on: false, shown: (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim()};
if (state.startsWith('class:')) { const c = state.slice(6).trim(); return {found: true, on: el.classList.contains(c), shown: 'class="' + el.className + '"'}; }
const v = el.getAttribute(state);
return {found: true, on: v === 'true', shown: state + '=' + JSON.stringify(v)};
})`

func (d *driver) readMode(ctx context.Context, sel, state string) (modeRead, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[modeRead]("(() => {"+helpers+"\nreturn "+readModeJS+"("+js(sel)+", "+js(state)+");\n})()"))
}

// setModes puts the page in the model's modes, in name order, and reads
// each back: a switch is clicked when its state is not the one wanted,
// a menu opened and its choice clicked when its chosen label is not. A
// mode that cannot be found, set or read back fails the attempt as
// environment, naming the mode and what the page showed. It returns the
// modes as read back ("deepThink on, search off").
func (d *driver) setModes(ctx context.Context, modes map[string]string) (string, error) {
	var ran []string
	for _, name := range slices.Sorted(maps.Keys(modes)) {
		want := modes[name]
		m, ok := d.site.Modes[name]
		if !ok {
			return strings.Join(ran, ", "), d.modeErr(name, "the site has no such mode (sites.%s.modes)", d.siteName)
		}
		var err error
		if m.Switch != "" {
			err = d.setSwitch(ctx, name, m, want == config.ModeOn)
		} else {
			err = d.chooseMenu(ctx, name, m, want)
		}
		if err != nil {
			return strings.Join(ran, ", "), err
		}
		ran = append(ran, name+" "+want)
	}
	if len(ran) > 0 {
		d.step("modes set and read back", "modes", strings.Join(ran, ", "))
	}
	return strings.Join(ran, ", "), nil
}

// modeErr is a mode's failure: environment (the page, not the task), one line.
func (d *driver) modeErr(name, format string, args ...any) error {
	return attempt.Errorf(taskfile.ClassEnvironment, "site %s: mode %s: %s", d.siteName, name, taskfile.OneLine(fmt.Sprintf(format, args...)))
}

func onOff(on bool) string {
	if on {
		return config.ModeOn
	}
	return config.ModeOff
}

func (d *driver) setSwitch(ctx context.Context, name string, m config.SiteMode, on bool) error {
	r, err := d.readMode(ctx, m.Switch, m.State)
	if err != nil {
		return d.fail(ctx, "read mode %s: %w", name, err)
	}
	if !r.Found {
		return d.modeErr(name, "switch %q matches nothing on the page", m.Switch)
	}
	if r.On == on {
		return nil
	}
	if _, err := d.click(ctx, m.Switch); err != nil {
		return d.fail(ctx, "click mode %s: %w", name, err)
	}
	r, err = d.waitMode(ctx, m.Switch, m.State, func(r modeRead) bool { return r.Found && r.On == on })
	if err != nil {
		return err
	}
	if !r.Found || r.On != on {
		return d.modeErr(name, "switch %q still reads %s after a click (%s), want %s", m.Switch, onOff(r.On), r.Shown, onOff(on))
	}
	return nil
}

func (d *driver) chooseMenu(ctx context.Context, name string, m config.SiteMode, want string) error {
	chosen := m.Chosen
	if chosen == "" {
		chosen = m.Menu
	}
	has := func(r modeRead) bool { return r.Found && strings.Contains(r.Shown, want) }
	r, err := d.readMode(ctx, chosen, "")
	if err != nil {
		return d.fail(ctx, "read mode %s: %w", name, err)
	}
	if has(r) {
		return nil
	}
	if found, err := d.click(ctx, m.Menu); err != nil {
		return d.fail(ctx, "open mode %s's menu: %w", name, err)
	} else if !found {
		return d.modeErr(name, "menu %q matches nothing on the page", m.Menu)
	}
	found := false
	deadline := time.Now().Add(modeWait)
	for !found {
		labels, err := chromedp.Run(ctx, chromedp.Evaluate[[]string]("(() => {"+helpers+"\nreturn qa("+js(m.Option)+").els.map((e) => (e.innerText || e.textContent || '').replace(/\\s+/g, ' ').trim());\n})()"))
		if err != nil {
			return d.fail(ctx, "read mode %s's menu: %w", name, err)
		}
		found = slices.Contains(labels, want)
		if !found {
			if time.Now().After(deadline) {
				return d.modeErr(name, "menu %q shows no choice %q (its choices: %s)", m.Menu, want, strings.Join(labels, ", "))
			}
			if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
				return d.fail(ctx, "mode %s: %w", name, err)
			}
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void]("(() => {"+helpers+"\nconst e = qa("+js(m.Option)+").els.find((e) => (e.innerText || e.textContent || '').replace(/\\s+/g, ' ').trim() === "+js(want)+"); if (e) e.click();\n})()")); err != nil {
		return d.fail(ctx, "choose mode %s: %w", name, err)
	}
	r, err = d.waitMode(ctx, chosen, "", has)
	if err != nil {
		return err
	}
	if !has(r) {
		return d.modeErr(name, "menu %q shows %q after choosing %q", chosen, r.Shown, want)
	}
	return nil
}

// waitMode reads a control until ok holds or modeWait passes.
func (d *driver) waitMode(ctx context.Context, sel, state string, ok func(modeRead) bool) (modeRead, error) {
	deadline := time.Now().Add(modeWait)
	for {
		r, err := d.readMode(ctx, sel, state)
		if err != nil {
			return r, d.fail(ctx, "read mode: %w", err)
		}
		if ok(r) || time.Now().After(deadline) {
			return r, nil
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return r, d.fail(ctx, "read mode: %w", err)
		}
	}
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spoolgate/spoolgate/spool/config"
	"text/tabwriter"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/internal/safetext"
)

func init() {
	register("check", "open SITE in the web profile: does every selector still match, is it ready", cmdCheck)
}

// cmdCheck: spoolgate check SITE [--show] [--send TEXT]. The selector-drift
// check: one line per site key, then whether the page reads as signed in,
// limited and ready. Exit 0 only when ready. It holds the web-runner lock
// like login, so no task runs on the profile meanwhile.
func cmdCheck(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("check", &c)
	show := fs.Bool("show", false, "a visible browser window instead of headless")
	send := fs.String("send", "", "also send this message and report the answer and the timings")
	account := fs.String("account", "", "the account (web session) whose profile to open; default: the only session of SITE")
	suggest := fs.Bool("suggest", false, "propose a selector for every key found on the page, and a sites: block to paste")
	write := fs.Bool("write", false, "with --suggest: put the block into the config file (comments kept, a .bak beside it)")
	probe := fs.Bool("probe", false, "with --suggest: send the default probe (a short Markdown document asked for) as --send would")
	picture := fs.Bool("picture", false, "with --suggest and --send or --probe: also ask for a picture, to propose artifactsFrom (where the site keeps generated files)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("check: want exactly one SITE, got %d arguments", len(pos))
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	site := pos[0]
	sc, ok := cfg.Sites[site]
	if !ok {
		return usagef("check: site %q is not in the config's sites:", site)
	}
	if *suggest {
		return runSuggest(ctx, env, cfg, "check", site, sc, suggestFlags{show: *show, send: *send, probe: *probe, picture: *picture, write: *write, account: *account})
	}
	if *write {
		return usagef("check: --write goes with --suggest")
	}
	if *picture {
		return usagef("check: --picture goes with --suggest")
	}
	sess, err := webSessionFor(cfg, "check", site, *account)
	if err != nil {
		return err
	}
	unlock, err := lockSession("check", cfg, sess, pauseOrStop)
	if err != nil {
		return err
	}
	defer unlock()
	// With --send, the browser's and the driver's steps (page loaded, text
	// typed, first token, answer finished, each with its time since the
	// start) are printed after the keys, as the timings asked for.
	var steps bytes.Buffer
	var log *slog.Logger
	if *send != "" {
		log = slog.New(slog.NewTextHandler(&steps, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	}
	rep, err := browser.Check(ctx, cfg, site, browser.CheckOptions{Show: *show, Send: *send, Log: log, Profile: sess.Profile})
	if err != nil {
		return fmt.Errorf("check %s: %w", site, err)
	}
	// Everything printed that a page or the config gave is escaped as
	// status's output is: a page's ESC or BEL never reaches the terminal.
	line := safetext.Line
	fmt.Fprintf(env.Stdout, "site %s  %s\n", line(site), line(sc.URL))
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	for _, k := range rep.Keys {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Key, line(k.Selector), line(k.Note()))
	}
	for _, m := range rep.Modes {
		how := m.Kind
		if m.State != "" {
			how += " by " + m.State
		}
		fmt.Fprintf(tw, "  mode %s\t%s\t%s: %s\n", line(m.Mode), line(m.Selector), how, line(m.Note()))
	}
	_ = tw.Flush()
	fmt.Fprintf(env.Stdout, "generated files: %s\n", artifactsFromNote(sc))
	state := []string{"signed in"}
	if !rep.SignedIn {
		state[0] = "signed out"
	}
	if rep.Limited != "" {
		state = append(state, "limited: "+line(rep.Limited))
	} else {
		state = append(state, "not limited")
	}
	if rep.Ready {
		state = append(state, "ready")
	} else {
		state = append(state, "NOT READY")
	}
	fmt.Fprintf(env.Stdout, "page: %s\n", strings.Join(state, ", "))
	if *send != "" {
		fmt.Fprintf(env.Stdout, "send %q:\n", *send)
		for _, line := range strings.Split(strings.TrimSpace(steps.String()), "\n") {
			fmt.Fprintf(env.Stdout, "  %s\n", safetext.Line(line))
		}
		if rep.Answer != "" {
			fmt.Fprintf(env.Stdout, "answer: %q\n", rep.Answer)
		}
		if rep.Reasoning != "" {
			fmt.Fprintf(env.Stdout, "thinking (kept apart, never in the answer): %q\n", rep.Reasoning)
		}
	}
	printReading(env.Stdout, rep.Reading, *send != "")
	if !rep.Ready {
		for _, p := range rep.Problems {
			fmt.Fprintf(env.Stderr, "spoolgate: check %s: %s\n", line(site), line(p))
		}
		if keyMissing(rep) {
			fmt.Fprintf(env.Stderr, "spoolgate: check %s: hint: `spoolgate check %s --suggest --send hello` proposes a selector for each key from the page itself (--write puts them into the config)\n", line(site), line(site))
		}
		return &exitErr{code: 1}
	}
	return nil
}

// printReading says how the site's answer is read and ends; after a
// send, the answer as a task gets it, the method that delivered it and
// every completion signal seen.
func printReading(w io.Writer, r browser.CheckReading, sent bool) {
	line := safetext.Line
	fmt.Fprintf(w, "reading: %s", line(strings.Join(r.Methods, ", then ")))
	if len(r.Ends) > 0 {
		fmt.Fprintf(w, "; ends on proof: %s", line(strings.Join(r.Ends, ", or ")))
	}
	fmt.Fprintln(w)
	if r.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", line(r.Note))
	}
	if !sent || r.Method == "" {
		return
	}
	fmt.Fprintf(w, "read by: %s (%s), ended by %s\n", line(r.Method), line(r.Format), line(r.EndedBy))
	fmt.Fprintf(w, "signals seen: %s\n", line(strings.Join(r.Signals, ", ")))
	switch r.Check {
	case browser.CheckVerified:
		fmt.Fprintln(w, "checked against the page: verified (the answer, rendered, is the text the page shows)")
	case browser.CheckDiffers:
		fmt.Fprintf(w, "checked against the page: DIFFERS: %s\n", line(r.CheckDiff))
	case browser.CheckUnchecked:
		fmt.Fprintln(w, "checked against the page: unchecked (the page shows no answer element to compare with)")
	}
	for _, f := range r.Fallbacks {
		fmt.Fprintf(w, "  fell back: %s\n", line(f))
	}
}

// dropTime leaves the wall-clock time out of the step lines: each carries
// its time since the start (at=).
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// keyMissing: a key's selector is invalid or a key the page needs matches
// nothing: what --suggest is for.
func keyMissing(rep *browser.CheckReport) bool {
	for _, k := range rep.Keys {
		if k.Bad != "" || (k.Must && !k.Found) {
			return true
		}
	}
	return false
}

// artifactsFromNote says where the site's generated files are fetched
// with the account's session (issue 49).
func artifactsFromNote(sc config.SiteConfig) string {
	if len(sc.ArtifactsFrom) == 0 {
		return "artifactsFrom not set: nothing of the site's own origin is fetched with the account's session but blob: and data: files (`check --suggest --probe --picture` proposes it)"
	}
	return "fetched with the account's session only under artifactsFrom " + safetext.Line(strings.Join(sc.ArtifactsFrom, ", "))
}

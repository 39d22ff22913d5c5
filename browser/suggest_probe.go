package browser

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/spool/config"
)

// Suggest opens sc.URL in the profile and proposes a selector for every
// key it can find; with opts.Send it types and sends that one message
// and watches the answer stream. The caller holds the web-runner lock, as
// for Check. sc's own selectors, if any, are checked against what was
// found (Suggestion.Current).
//
// A greeting probe on a reasoning page is tried again with DefaultProbe:
// the model thinks at length and answers a greeting in one line, so the
// answer's element found is that line's (a paragraph), which misses
// every answer of more than one block; the report says so first among
// its problems.
func Suggest(ctx context.Context, cfg *config.Config, name string, sc config.SiteConfig, opts SuggestOptions) (*SuggestReport, error) {
	rep, err := suggestOnce(ctx, cfg, name, sc, opts)
	if err != nil || !greeting(opts.Send) || !rep.Thinking && !netThinks(rep) {
		return rep, err
	}
	o := opts
	o.Send = DefaultProbe
	again, err := suggestOnce(ctx, cfg, name, sc, o)
	if err != nil {
		return nil, err
	}
	again.Problems = append([]string{fmt.Sprintf("a greeting probe on a reasoning page (%q): the answer to a greeting is one line beside a long thinking, and its element misses answers of more than one block; probed again with the structured probe (--probe): these keys are that probe's", opts.Send)}, again.Problems...)
	return again, nil
}

// greeting: a probe that asks for no structure, a line of at most 20
// characters ("hello", "你好"), not DefaultProbe.
func greeting(probe string) bool {
	p := strings.TrimSpace(probe)
	return p != "" && p != DefaultProbe && !strings.Contains(p, "\n") && utf8.RuneCountInString(p) <= 20
}

// configSend is the selector the probe is sent with: the config's own
// send when it finds a visible element (the operator's key is what
// tasks click, and calibration may find no selector of its own for an
// icon-only button), else the one proposed in s. s notes which.
func configSend(tab context.Context, own string, s *Suggestion) string {
	if own == "" {
		return s.Selector
	}
	if ok, err := sgEval[bool](tab, `vis(q(`+js(own)+`))`); err != nil || !ok {
		return s.Selector
	}
	if s.Selector == "" {
		// Proposed as it is, so the block keeps it and the probe's
		// answer (or its absence) judges it.
		s.Selector, s.Confidence, s.Current = own, "medium", "ok"
		s.Why += "; the config's own send finds a visible button: the probe is sent with it"
	}
	return own
}

// idSegment matches a path segment that names one conversation, message
// or request rather than an endpoint: a number, a UUID, a hex or base-64
// token of 8 or more, or a run of 8 or more letters and digits with
// digits among them (c9e3ba0b2874f9dcd, V1StGXR8_Z5jdHi6B-myT).
var idSegment = regexp.MustCompile(`^(\d+|[0-9a-fA-F]{8}(-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}|[0-9a-fA-F]{8,}|[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*)$`)

// pastIDs is a URL path with each id segment a * (config's MatchesURL):
// a probe's answer came from /api/chat/3f2a…/messages/17, and the next
// task's comes from another conversation's, which the key must match
// too. A segment of letters alone (completion, stream) and a short one
// with a digit (v1, v2) are the endpoint's and stay.
func pastIDs(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if s != "" && idSegment.MatchString(s) && (len(s) >= 8 || strings.Trim(s, "0123456789") == "") {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// thinkingBeside finds, when the network key reads a thinking field, the
// element that shows that thinking outside the answer's element, beside
// it or elsewhere in its bubble (SG.thinkingBeside), so `thinking:` is
// proposed wherever the page draws it: a page read from the DOM then
// keeps its thinking apart too. Found is false when the stream has no
// thinking or the page shows it nowhere apart.
func thinkingBeside(tab context.Context, all []netState, spec *NetSpec) found {
	if spec == nil || spec.Resolved().Reasoning == "" {
		return found{}
	}
	n := spec.Resolved()
	for i := len(all) - 1; i >= 0; i-- {
		st := all[i]
		if !st.Ended || st.Failed != "" || st.BodyErr != nil || !n.MatchesURL(st.URL) {
			continue
		}
		_, think, err := extractBoth(n, st.Body)
		if err != nil || strings.TrimSpace(think) == "" {
			continue
		}
		f, err := sgEval[found](tab, `SG.thinkingBeside(`+js(think)+`)`)
		if err != nil {
			return found{}
		}
		return f
	}
	return found{}
}

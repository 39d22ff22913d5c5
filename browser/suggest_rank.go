// This file holds how --suggest rates a selector: the Candidate a page
// proposes, the durability score of each kind of selector part, the
// ranking of a key's candidates and the confidence of the best one, and
// what a probe says of a selector: the config's judged (judgeCurrent)
// and the proposals confirmed by a second probe (confirm).

package browser

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/browser/generated"
)

// CurrentPasses is Suggestion.Current for a config's selector that the
// probe itself judged and found working: --write keeps it.
const CurrentPasses = "passes the probe"

// SecondProbe is the message of the second probe that confirms a first
// probe's proposals: another text, so another answer.
func SecondProbe(probe string) string { return "Once more, in other words: " + probe }

// probeKeysJudged are the keys a probe judges the config's selector of.
var probeKeysJudged = []string{"answer", "busy", "done", "copy"}

// judgeCurrent notes, for each key the probe judged the config's
// selector of, whether it passed (CurrentPasses) or why not; the
// config's thinking key, when the probe proposed none (see
// thinkingBeside), is reported the same way.
func (r *SuggestReport) judgeCurrent(watch map[string]string, thinking string) {
	for i := range r.Keys {
		v, ok := watch[r.Keys[i].Key]
		if !ok {
			continue
		}
		if v == "ok" {
			r.Keys[i].Current = CurrentPasses
			r.Keys[i].Why += "; the config's selector passes the probe and is kept"
		} else {
			r.Keys[i].Current = "fails the probe: " + v
		}
	}
	if _, found := r.Get("thinking"); found {
		return // proposed from the stream's thinking, and judged above
	}
	if v, ok := watch["thinking"]; ok && thinking != "" {
		s := Suggestion{Key: "thinking", Confidence: "none", Why: "the config's thinking: " + v + " (--suggest finds a marked block without one)"}
		if v == "ok" {
			s.Current = CurrentPasses
		}
		r.Keys = append(r.Keys, s)
	}
}

// spans is the busy rule: an element that showed from first to last (ms
// after the send) was present from the send to the stream's end: it
// showed before the answer's first growth, and until the end of the
// response that carried the answer (end) or of the text's growth, or,
// with no such response, through at least 80 % of the text's growth (a
// page may still draw the answer's tail, or its action bar, after the
// stream ended).
func (pk probeKeys) spans(first, last float64, end time.Time) bool {
	if first > pk.FirstGrowth+150 {
		return false
	}
	if !end.IsZero() {
		// Until the response ended, or the page's text stopped growing
		// if that came first (a stream held open after its last event).
		if g := pk.at(pk.LastGrowth); g.Before(end) {
			end = g
		}
		return !pk.at(last).Before(end.Add(-200 * time.Millisecond))
	}
	span := pk.LastGrowth - pk.FirstGrowth
	return span <= 0 || (last-max(first, 0))/span >= 0.8
}

// at is the wall time of ms after the send (the page's clock).
func (pk probeKeys) at(ms float64) time.Time {
	return time.UnixMilli(int64(pk.Wall0)).Add(time.Duration(ms * float64(time.Millisecond)))
}

// spansStream: sel, of busy's candidates, follows the busy rule.
func spansStream(pk probeKeys, sel string, end time.Time) bool {
	for _, c := range pk.Busy.Cands {
		if c.Selector == sel {
			return pk.spans(c.First, c.Last, end)
		}
	}
	return false
}

// busyVerdict turns the page's "span" verdict of a watched busy into
// "ok" or why not, by the busy rule.
func (pk probeKeys) busyVerdict(end time.Time) {
	if pk.Watch["busy"] != "span" {
		return
	}
	w := pk.Seen["busy"]
	switch {
	case w.First > pk.FirstGrowth+150:
		pk.Watch["busy"] = "showed only after the answer began"
	case !pk.spans(w.First, w.Last, end):
		pk.Watch["busy"] = "went before the stream's end"
	default:
		pk.Watch["busy"] = "ok"
	}
}

// netEnd is when the last response that spec reads ended (zero: none).
func netEnd(all []netState, spec *NetSpec) time.Time {
	var end time.Time
	if spec == nil {
		return end
	}
	u := spec.Resolved() // a named protocol's own URL, unless the key moved it
	for _, st := range all {
		if st.Ended && st.Failed == "" && u.MatchesURL(st.URL) && st.EndedAt.After(end) {
			end = st.EndedAt
		}
	}
	return end
}

// netThinks: the proposed network key reads a thinking field apart.
func netThinks(r *SuggestReport) bool {
	s, ok := r.Get("network")
	return ok && s.Network != nil && s.Network.Resolved().Reasoning != ""
}

// confirm sends a second probe (SecondProbe), on the page loaded anew,
// with the first probe's proposals watched, when any of the keys a probe
// finds was proposed at high confidence: each is kept high only if the
// second probe showed it working again (the answer's selector finding
// the new answer, busy from the send to the end, done only after it, the
// network key reading it), and is medium otherwise, with why.
func (r *SuggestReport) confirm(tab context.Context, d *driver, nw *netWatch, inSel, sendSel string) error {
	keys := []string{"input", "send", "answer", "network", "busy", "done", "copy"}
	var high []int
	for i, s := range r.Keys {
		if s.Confidence == "high" && s.Selector != "" && slices.Contains(keys, s.Key) {
			high = append(high, i)
		}
	}
	if len(high) == 0 {
		return nil
	}
	verdict := map[string]string{}
	watch := map[string]string{}
	for _, k := range probeKeysJudged {
		if s, ok := r.Get(k); ok && s.Selector != "" {
			watch[k] = s.Selector
		}
	}
	probe := SecondProbe(r.Probe)
	var pk probeKeys
	var end time.Time
	n := len(nw.states())
	// On the page opened anew, as each task opens it (some pages change
	// their field once a chat has begun).
	err := chromedp.Do(tab, chromedp.Navigate(r.URL))
	if err == nil {
		_, err = waitRest(tab, d)
	}
	if err == nil {
		_, err = d.setText(tab, "input", inSel, probe)
	}
	if err == nil {
		pk, err = probeAnswer(tab, d, sendSel, probe, watch)
	}
	if tab.Err() != nil {
		return context.Cause(tab)
	}
	switch {
	case err != nil:
		verdict["input"] = "it failed: " + err.Error()
	case !pk.Answer.Found:
		verdict["input"] = "it brought no answer"
	}
	if v := verdict["input"]; v != "" {
		verdict["send"] = v
	}
	if s, ok := r.Get("network"); ok && s.Network != nil && err == nil {
		nw.waitFor(tab, netEndWait, func() bool {
			st := nw.states()
			for _, x := range st[min(n, len(st)):] {
				if !x.Ended {
					return false
				}
			}
			return len(st) > n
		})
		if st := nw.states(); len(st) <= n || !netPasses(s.Network, st[n:], "", pk.Answer.Text) {
			verdict["network"] = "its response did not carry the second answer"
		} else {
			end = netEnd(st[n:], s.Network)
		}
	}
	pk.busyVerdict(end)
	for k, v := range pk.Watch {
		if v != "ok" {
			verdict[k] = v
		}
	}
	for _, i := range high {
		s := &r.Keys[i]
		if v, bad := verdict[s.Key]; bad || verdict["input"] != "" {
			if !bad {
				v = verdict["input"]
			}
			s.Confidence, s.Why = "medium", s.Why+"; a second probe did not confirm it ("+v+")"
			continue
		}
		s.Why += "; confirmed by a second probe"
	}
	// The network key is checked on the second probe's conversation
	// whatever its confidence: a URL that named the first one's ids
	// would match no later task's.
	if i := slices.IndexFunc(r.Keys, func(s Suggestion) bool { return s.Key == "network" && s.Network != nil }); i >= 0 && !slices.Contains(high, i) {
		if s := &r.Keys[i]; verdict["network"] != "" || verdict["input"] != "" {
			s.Confidence, s.Why = "low", s.Why+"; a second probe, in a new conversation, did not confirm it ("+verdict["network"]+verdict["input"]+")"
		} else {
			s.Why += "; it read a second probe's answer, in a new conversation, too"
		}
	}
	r.Second = fmt.Sprintf("%q answered: %q", probe, pk.Answer.Text)
	return nil
}

// Candidate is one selector that picks out a key's element, with what it
// rests on. The page (suggestJS) finds them and checks each with the
// driver's own lookup; rankCandidates scores them here.
type Candidate struct {
	Selector string   `json:"sel"`
	Kinds    []string `json:"kinds"` // testid, aria, role, data, name, placeholder, ...
	Notes    []string `json:"notes"` // the attribute or class each part names
	Combo    bool     `json:"combo"` // an ancestor's part and the element's own
	Matches  int      `json:"matches"`
	Shadow   int      `json:"shadow"`          // 1: found in an open shadow root, -1: through >>>
	Cover    float64  `json:"cover,omitempty"` // busy: the share of the answer's growth it showed for
	Lag      float64  `json:"lag,omitempty"`   // busy: ms the text still grew after it went
	First    float64  `json:"first,omitempty"` // busy: ms after the send it first showed
	Last     float64  `json:"last,omitempty"`  // busy: ms after the send it last showed
	What     string   `json:"what,omitempty"`
	Score    int      `json:"score"`
}

// kindScore is how long a selector part is likely to survive a site
// update, out of 100. Test ids are kept for the site's own tests; aria
// labels and roles for accessibility (both break the site's own users
// when changed, but a label is in one language); data attributes and
// names are the site's own vocabulary; a custom element's name is its
// component; placeholders and titles are visible text that copy writers
// change; ids are often unique but sometimes generated; plain tags hold
// only while the page keeps one of them; a readable class is the first
// thing a redesign renames. Generated and utility classes never reach
// here (suggestJS drops them).
var kindScore = map[string]int{
	"testid":       100,
	"aria":         90,
	"role":         85,
	"data":         85,
	"name":         85,
	"component":    80,
	"placeholder":  80,
	"type":         75,
	"title":        75,
	"id":           70,
	"editable":     70,
	"tag":          60,
	"dataPresence": 60,
	"class":        50,
}

// singleKeys are keys whose selector's first match is used: more matches
// mean the selector rests on page order too.
var singleKeys = map[string]bool{"input": true, "send": true, "newChat": true, "error": true}

// keyWords are the words a page's names use for each key's element.
var keyWords = map[string]*regexp.Regexp{
	"input":   regexp.MustCompile(`(?i)input|composer|prompt|message|editor|chat`),
	"send":    regexp.MustCompile(`(?i)send|submit`),
	"newChat": regexp.MustCompile(`(?i)new`),
	"answer":  regexp.MustCompile(`(?i)assistant|bot|answer|response|received|incoming|\bai\b|ai-|model|markdown|content`),
	"busy":    regexp.MustCompile(`(?i)stop|typing|loading|progress|busy|thinking|generat|cancel`),
	"done":    regexp.MustCompile(`(?i)action|toolbar|copy|feedback|regenerat`),
	"copy":    regexp.MustCompile(`(?i)copy`),
	"error":   regexp.MustCompile(`(?i)error|alert|fail`),
}

var genericTag = regexp.MustCompile(`^(button|div|span|p|li|section|a|svg|input)$`)

// score rates one candidate for key.
func (c Candidate) score(key string) int {
	if len(c.Kinds) == 0 {
		return 0
	}
	s := 100
	for _, k := range c.Kinds {
		s = min(s, kindScore[k])
	}
	if len(c.Kinds) == 1 && c.Kinds[0] == "tag" && genericTag.MatchString(c.Selector) {
		s = 40 // the page's only <button>: until it has two
	}
	s -= 4 * (len(c.Kinds) - 1)
	if c.Combo {
		s -= 3
	}
	if c.Shadow == -1 {
		s -= 2
	}
	if singleKeys[key] && c.Matches > 1 {
		s -= 8
	}
	if key == "busy" {
		s += int(10 * c.Cover)
	}
	if re := keyWords[key]; re != nil && re.MatchString(strings.Join(c.Notes, " ")) {
		s += 6 // the page's own name for the thing: message-input, send-button
	}
	return max(s, 1)
}

// rankCandidates orders a key's candidates best first: by score, then the
// shorter selector.
func rankCandidates(key string, cs []Candidate) []Candidate {
	out := make([]Candidate, len(cs))
	copy(out, cs)
	for i := range out {
		out[i].Score = out[i].score(key)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return len(out[i].Selector) < len(out[j].Selector)
	})
	return out
}

// confidence: how sure the suggestion is, from how the element was told
// (a send button named send, or only the nearest) and how durable its
// best selector is.
func confidence(key string, best Candidate, f found) string {
	s := best.Score
	switch {
	case key == "send" && f.Sure == 0:
		return "low"
	case key == "send" && f.Sure == 1:
		s = min(s, 70)
	case key == "busy" && best.Cover < 0.5:
		s = min(s, 55)
	}
	if singleKeys[key] && best.Matches > 1 {
		s = min(s, 70) // the first of several: it rests on page order too
	}
	switch {
	case s >= 75:
		return "high"
	case s >= 55:
		return "medium"
	}
	return "low"
}

// PictureProbe is the message the suggestion sends to learn where the
// site keeps the files its answers generate (issue 49): the answer's
// pictures' addresses give the site's artifactsFrom.
const PictureProbe = "Draw a small picture of a spool of thread."

// probePicture opens the page anew, sends PictureProbe and proposes
// artifactsFrom from the addresses of the pictures and files the answer
// shows: each one's folder (a path on the page's origin, or the absolute
// folder on another host), with the id-like segments at its end dropped,
// so the next answer's files fall under it too. A page that draws no
// picture gets no proposal, and the reason.
func (r *SuggestReport) probePicture(tab context.Context, d *driver, inSel, sendSel, answerSel string) error {
	err := navigate(tab, r.URL)
	if err == nil {
		_, err = waitRest(tab, d)
	}
	if err == nil {
		_, err = d.setText(tab, "input", inSel, PictureProbe)
	}
	var pk probeKeys
	if err == nil {
		pk, err = probeAnswer(tab, d, sendSel, PictureProbe, map[string]string{"answer": answerSel})
	}
	if tab.Err() != nil {
		return context.Cause(tab)
	}
	s := Suggestion{Key: "artifactsFrom", Confidence: "none"}
	switch {
	case err != nil:
		s.Why = "the picture probe failed: " + err.Error()
	case !pk.Answer.Found:
		s.Why = "the picture probe brought no answer"
	default:
		refs, page, lerr := generated.List(tab, helpers, answerSel, "")
		if lerr != nil {
			s.Why = "the picture probe's answer could not be read: " + lerr.Error()
			break
		}
		var addrs []string
		for _, ref := range refs {
			addrs = append(addrs, ref.URL)
		}
		s.List = generated.Prefixes(page, addrs)
		if len(s.List) == 0 {
			s.Why = "the picture probe's answer showed no picture or file on an address of the site's (without artifactsFrom only blob: and data: files are kept)"
			break
		}
		s.Selector = "[" + strings.Join(s.List, ", ") + "]"
		s.Confidence = "medium"
		s.Why = fmt.Sprintf("the %d file(s) of the answer to %q live there: only these prefixes are fetched with the account's session", len(addrs), PictureProbe)
	}
	r.Keys = append(r.Keys, s)
	return nil
}

// This file holds how --suggest rates a selector: the Candidate a page
// proposes, the durability score of each kind of selector part, the
// ranking of a key's candidates and the confidence of the best one.

package browser

import (
	"regexp"
	"sort"
	"strings"
)

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

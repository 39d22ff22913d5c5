package chatstand

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// directives are what the shared stand-in scheme lets a task's content ask
// of the stand-in: `[[duration=31s]]`, `[[hang]]`, `[[fail=N]]`, `[[empty]]`,
// `[[nostart]]`, `[[cut=N]]`, `[[limit]]`, `[[signout]]`, `[[challenge]]` (`[[status=N]]` is the API
// stand-in's and is ignored here); for a page with a Markdown renderer
// also `[[md=NAME]]` (a corpus answer), `[[pause=D]]` (the answer stops
// half way for D of real time, not scaled: it is measured against the
// driver's quiet), `[[errorturn]]` (the answer is the site's error turn)
// `[[json]]` and `[[json=never]]` (a JSON answer: jsonAnswer),
// `[[media]]` (the answer links two generated PNG images and a CSV file,
// served to its signed-in session only: media.go), `[[plant]]` (the answer
// shows the planted addresses of secrets.go, which the task's text does
// not name) and `[[lie]]` (the page shows "Answre" where it streamed "Answer": see
// page.html's show).
type directives struct {
	duration    time.Duration // 0: the default
	hang        bool
	fail        int
	empty       bool
	nostart     bool          // the request is taken and never answered
	cut         int           // the answer stops after this many words; "Continue generating" plays the rest
	limit       bool          // the message meets the usage limit (LimitMessage)
	md          string        // a corpus answer's name
	pause       time.Duration // real time the answer stops half way
	errorTurn   bool          // the answer is the error turn
	media       bool          // the answer links two generated images and a file (media.go)
	signout     bool          // the user is signed out once the answer is given (holds.go)
	challenge   bool          // the user's next pages show a challenge frame (holds.go)
	plant       bool          // the answer shows the planted addresses (secrets.go), as a model repeating a page it read would
	json        string        // "once" or "never": the answer is JSON (see jsonAnswer)
	cleanedText string        // content with directives removed, whitespace folded
}

var directiveRE = regexp.MustCompile(`\[\[\s*([a-zA-Z]+)\s*(?:=\s*([^\]]*?))?\s*\]\]`)

// parseDirectives strips directives from content and returns what they ask.
// Unknown or malformed directives are removed and otherwise ignored.
func parseDirectives(content string) directives {
	var d directives
	for _, m := range directiveRE.FindAllStringSubmatch(content, -1) {
		switch strings.ToLower(m[1]) {
		case "duration":
			if v, err := time.ParseDuration(m[2]); err == nil && v >= 0 {
				d.duration = v
			}
		case "hang":
			d.hang = true
		case "fail":
			if n, err := strconv.Atoi(m[2]); err == nil && n > 0 {
				d.fail = n
			}
		case "empty":
			d.empty = true
		case "nostart":
			d.nostart = true
		case "limit":
			d.limit = true
		case "md":
			d.md = strings.TrimSpace(m[2])
		case "pause":
			if v, err := time.ParseDuration(m[2]); err == nil && v > 0 {
				d.pause = v
			}
		case "errorturn":
			d.errorTurn = true
		case "media":
			d.media = true
		case "signout":
			d.signout = true
		case "challenge":
			d.challenge = true
		case "plant":
			d.plant = true
		case "json":
			d.json = "once"
			if strings.TrimSpace(m[2]) == "never" {
				d.json = "never"
			}
		case "cut":
			if n, err := strconv.Atoi(m[2]); err == nil && n > 0 {
				d.cut = n
			}
		}
	}
	if strings.Contains(strings.ToLower(content), "draw a small picture") {
		d.media = true // spoolgate's picture probe (browser.PictureProbe) gets pictures, as a drawing model's answer
	}
	d.cleanedText = strings.Join(strings.Fields(directiveRE.ReplaceAllString(content, " ")), " ")
	return d
}

// AnswerFor returns the stand-in's deterministic answer to content:
// "Answer: " and the content with directives removed and whitespace folded,
// or "" for `[[empty]]`.
func AnswerFor(content string) string {
	d := parseDirectives(content)
	if d.empty {
		return ""
	}
	if d.json != "" {
		return jsonAnswer(d.json, content)
	}
	return "Answer: " + d.cleanedText
}

// The answers of `[[json]]` and `[[json=never]]`, a model asked for JSON
// (spoolgate's schema tests): `[[json]]` answers JSON that does not parse
// until the message says its previous answer was refused (spoolgate's
// retry tells it so), then JSONValid; `[[json=never]]` always answers
// JSONMismatch, JSON whose title is a number.
const (
	JSONValid    = `{"title": "Spools", "tags": ["thread", "craft"]}`
	JSONBroken   = `{"title": "Spools", "tags": [thread, craft]}`
	JSONMismatch = `{"title": 42, "tags": ["thread"]}`
)

func jsonAnswer(mode, content string) string {
	switch {
	case mode == "never":
		return JSONMismatch
	case strings.Contains(content, "previous answer was refused"):
		return JSONValid
	}
	return JSONBroken
}

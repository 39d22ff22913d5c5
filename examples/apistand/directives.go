package apistand

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Directives is what the user content asked the stand-in to do. The scheme
// is shared with the web stand-in so that one task file shapes either.
type Directives struct {
	Duration time.Duration // total answer time before scaling; 0: at once
	Hang     bool          // never finish the answer
	Status   int           // answer with this HTTP status; 0: 200
	Fail     int           // fail the first Fail requests with this content (500)
	Empty    bool          // answer with empty text

	// The shapes of real gateways (see shapes.go).
	Shape       string // body of an error status: openai (default), string, message, detail, array, html, text, empty
	StreamError string // a 200 stream whose second event is an error with this code
	JSON        bool   // answer a streamed request with one JSON completion
	Junk        bool   // answer 200 with an HTML page: neither a stream nor a completion
	// Echo: every message the stand-in writes is EchoLen filler
	// characters with the request's Authorization header inserted at
	// EchoAt (a server that echoes the key back).
	Echo            bool
	EchoAt, EchoLen int
	// Reasoning and Cached are the reasoning and cached tokens its usage
	// reports (completion_tokens_details, prompt_tokens_details): the
	// reasoning ones are added to the completion's, as OpenAI counts them.
	Reasoning, Cached int
}

var directiveRe = regexp.MustCompile(`\[\[\s*([a-zA-Z]+)\s*(?:=\s*([^\]]*?)\s*)?\]\]`)

// ParseDirectives strips the [[...]] directives from content and returns
// them with the deterministic answer text: "Answer: " followed by the
// remaining content with whitespace folded. Unknown or malformed directives
// are stripped and ignored.
func ParseDirectives(content string) (Directives, string) {
	var d Directives
	for _, m := range directiveRe.FindAllStringSubmatch(content, -1) {
		name, val := strings.ToLower(m[1]), m[2]
		switch name {
		case "duration":
			if v, err := time.ParseDuration(val); err == nil && v > 0 {
				d.Duration = v
			}
		case "hang":
			d.Hang = true
		case "status":
			if v, err := strconv.Atoi(val); err == nil && v >= 100 && v <= 599 {
				d.Status = v
			}
		case "fail":
			if v, err := strconv.Atoi(val); err == nil && v > 0 {
				d.Fail = v
			}
		case "empty":
			d.Empty = true
		case "shape":
			d.Shape = strings.ToLower(val)
		case "streamerror":
			d.StreamError = val
		case "json":
			d.JSON = true
		case "reasoning", "cached":
			if v, err := strconv.Atoi(val); err == nil && v > 0 && v <= 1<<20 {
				if name == "reasoning" {
					d.Reasoning = v
				} else {
					d.Cached = v
				}
			}
		case "junk":
			d.Junk = true
		case "echokey":
			// echokey=AT/LEN
			at, n, ok := strings.Cut(val, "/")
			a, err1 := strconv.Atoi(at)
			l, err2 := strconv.Atoi(n)
			if ok && err1 == nil && err2 == nil && l >= 0 && a >= 0 && a <= l && l <= 1<<20 {
				d.Echo, d.EchoAt, d.EchoLen = true, a, l
			}
		}
	}
	rest := directiveRe.ReplaceAllString(content, " ")
	return d, "Answer: " + strings.Join(strings.Fields(rest), " ")
}

package apimodel

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"
)

// serverError is what an error answer said, whatever its shape: an HTTP
// error status with its body, an error object in a 200 JSON answer, or an
// error event in a stream. Its text is raw: redact before keeping it.
type serverError struct {
	Status  int    // HTTP status; 0 inside a 200 answer
	Message string // the server's message, raw
	Code    string // error.code, as text (string or number)
	Type    string // error.type (or Google's error.status)
	// NumCode is a numeric code in the range of HTTP statuses, as
	// gateways put in stream errors ({"error":{"code":502,...}}).
	NumCode int
}

// parseErrorBody reads an error body of any common shape:
//
//	{"error":{"message":..,"type":..,"code":..}}   OpenAI and most vendors
//	[{"error":{...}}]                               Google's compatible API
//	{"error":"PayloadTooLargeError","message":..}   express and friends
//	{"message":..,"type":..,"code":..}              message alone (vLLM, gateways)
//	{"detail":..}                                   FastAPI
//	{"errors":[{"message":..}]}                     lists of errors
//	HTML (a proxy's error page), plain text, or nothing at all.
//
// The message is left raw and whole; the caller redacts, then cuts.
func parseErrorBody(body []byte) serverError {
	b := bytes.TrimSpace(body)
	var v any
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Unmarshal(b, &v) == nil {
		if e, ok := errorFromJSON(v); ok {
			return e
		}
		// JSON of no shape we know: keep it as text.
		return serverError{Message: string(b)}
	}
	if looksHTML(b) {
		return serverError{Message: htmlText(b)}
	}
	return serverError{Message: string(b)}
}

// errorFromJSON finds the error in a decoded JSON body; ok is false when
// the body has no error in any shape we know.
func errorFromJSON(v any) (serverError, bool) {
	if arr, ok := v.([]any); ok {
		if len(arr) == 0 {
			return serverError{}, false
		}
		v = arr[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return serverError{}, false
	}
	var e serverError
	switch inner := obj["error"].(type) {
	case map[string]any:
		e.Message = str(inner["message"])
		e.setCode(inner["code"])
		e.Type = str(inner["type"])
		if e.Type == "" {
			e.Type = str(inner["status"]) // Google: "RESOURCE_EXHAUSTED"
		}
		if e.Message == "" {
			e.Message = str(obj["message"])
		}
		if e.Message == "" {
			e.Message = compact(inner)
		}
		return e, true
	case string:
		// express: {"error":"PayloadTooLargeError","message":"request entity too large"}
		e.Message = inner
		if m := str(obj["message"]); m != "" && !strings.HasPrefix(m, inner) {
			e.Message = inner + ": " + m
		} else if m != "" {
			e.Message = m
		}
		e.setCode(obj["code"])
		return e, true
	}
	if m := str(obj["message"]); m != "" {
		e.Message = m
		e.setCode(obj["code"])
		e.Type = str(obj["type"])
		return e, true
	}
	switch d := obj["detail"].(type) {
	case string:
		return serverError{Message: d}, true
	case nil:
	default:
		return serverError{Message: compact(d)}, true
	}
	if list, ok := obj["errors"].([]any); ok && len(list) > 0 {
		if first, ok := list[0].(map[string]any); ok && str(first["message"]) != "" {
			e.Message = str(first["message"])
			e.setCode(first["code"])
			return e, true
		}
	}
	return serverError{}, false
}

// setCode records error.code, which servers send as a string, a number
// or null.
func (e *serverError) setCode(v any) {
	switch c := v.(type) {
	case string:
		e.Code = c
		if n, err := strconv.Atoi(c); err == nil && n >= 100 && n <= 599 {
			e.NumCode = n
		}
	case float64:
		e.Code = strconv.FormatFloat(c, 'f', -1, 64)
		if c >= 100 && c <= 599 && c == float64(int(c)) {
			e.NumCode = int(c)
		}
	}
}

// str returns v if it is a string.
func str(v any) string {
	s, _ := v.(string)
	return s
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func looksHTML(b []byte) bool {
	if len(b) == 0 || b[0] != '<' {
		return false
	}
	head := strings.ToLower(string(b[:min(len(b), 512)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype") ||
		strings.Contains(head, "<head") || strings.Contains(head, "<body") ||
		strings.Contains(head, "<title") || strings.Contains(head, "<pre")
}

var (
	htmlDropRe  = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)\s*>`)
	htmlTitleRe = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title\s*>`)
	htmlTagRe   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// htmlText turns an error page into one line: its title, then its text
// (a proxy's "502 Bad Gateway", express's "<pre>PayloadTooLargeError: ...").
func htmlText(b []byte) string {
	s := string(b)
	title := ""
	if m := htmlTitleRe.FindStringSubmatch(s); m != nil {
		title = strings.Join(strings.Fields(html.UnescapeString(htmlTagRe.ReplaceAllString(m[1], " "))), " ")
	}
	s = htmlDropRe.ReplaceAllString(s, " ")
	s = htmlTagRe.ReplaceAllString(s, " ")
	text := strings.Join(strings.Fields(html.UnescapeString(s)), " ")
	switch {
	case text == "":
		return title
	case title == "" || strings.HasPrefix(text, title):
		return text
	default:
		return title + ": " + text
	}
}

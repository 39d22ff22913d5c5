package apistand

import (
	"fmt"
	"html"
	"net/http"
	"strings"
)

// The answers of real servers and gateways that are only roughly
// OpenAI-compatible, chosen by directives: error bodies of every common
// shape, an error event inside a 200 stream, a JSON completion to a
// streamed request, an HTML page with status 200, and a server that
// echoes the caller's key back at any offset of its message.

// message returns the text an answer's message carries: def, or with
// [[echokey=AT/LEN]] the filler with the Authorization header inside.
func (d Directives) message(def, authorization string) string {
	if !d.Echo {
		return def
	}
	const filler = "The quick brown fox jumps over the lazy dog. "
	var b strings.Builder
	for b.Len() < d.EchoLen {
		b.WriteString(filler)
	}
	f := b.String()[:d.EchoLen]
	return f[:d.EchoAt] + "Authorization: " + authorization + f[d.EchoAt:]
}

// writeShaped writes an error answer with status code in the body shape
// that d.Shape names.
func writeShaped(w http.ResponseWriter, d Directives, code int, typ, msg string) {
	name := strings.ReplaceAll(http.StatusText(code), " ", "") + "Error"
	switch d.Shape {
	case "string": // express: the error's name as a string, the message beside it
		writeJSON(w, code, map[string]any{"error": name, "message": msg, "status": code})
	case "message": // message alone (vLLM, many gateways)
		writeJSON(w, code, map[string]any{"object": "error", "message": msg, "type": typ, "code": code})
	case "detail": // FastAPI
		writeJSON(w, code, map[string]any{"detail": msg})
	case "array": // Google's OpenAI-compatible endpoint
		writeJSON(w, code, []any{map[string]any{"error": map[string]any{"code": code, "message": msg, "status": "FAILED_PRECONDITION"}}})
	case "html": // a proxy's error page
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<p>%s</p>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			code, http.StatusText(code), code, http.StatusText(code), html.EscapeString(msg))
	case "text":
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		fmt.Fprint(w, msg)
	case "empty":
		w.WriteHeader(code)
	default:
		writeError(w, code, typ, msg)
	}
}

// streamErrorType is the type OpenAI sends beside an error code.
func streamErrorType(code string) string {
	switch {
	case strings.HasPrefix(code, "rate_limit"):
		return "requests"
	case code == "insufficient_quota", code == "server_error":
		return code
	default:
		return "invalid_request_error"
	}
}

// streamWithError answers 200 with a stream that breaks off with an
// error event after its first chunk, as gateways do when the upstream
// fails after the headers went out.
func streamWithError(w http.ResponseWriter, id int, model, code, msg string) {
	send := startEvents(w)
	send(chunk(id, model, map[string]any{"role": "assistant", "content": "Partial"}, nil))
	send(map[string]any{"error": map[string]any{"message": msg, "type": streamErrorType(code), "param": nil, "code": code}})
}

// writeJunk answers 200 with a page that is neither a stream nor a
// completion: a captive portal or a maintenance page.
func writeJunk(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>Back soon</h1><p>%s</p></body></html>", html.EscapeString(msg))
}

package apimodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// run executes one task and returns its result, its error as a
// *attempt.TaskError (nil on success) and its log.
func run(t *testing.T, e *Executor, c *config.Config, model, content string) (attempt.Result, *attempt.TaskError, string) {
	t.Helper()
	log := &logBuf{}
	res, err := e.Execute(t.Context(), job(c, model, "", content, log))
	if err == nil {
		return res, nil, log.String()
	}
	var te *attempt.TaskError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T); want a *attempt.TaskError", err, err)
	}
	return res, te, log.String()
}

// Error bodies of every common shape keep their status and message and
// are classed by status, or by a code that names the cause.
func TestExecutor_ErrorShapes(t *testing.T) {
	s := stand(t, apistand.Options{})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m"})
	e := executor(t, c)
	tests := []struct {
		name, content string
		class         taskfile.ErrorClass
		msg           string
	}{
		{"openai object 400", "[[status=400]]", taskfile.ClassPermanent, "m: HTTP 400 (invalid_request_error): stand-in: status 400 requested"},
		{"express string 413", "[[status=413]] [[shape=string]]", taskfile.ClassPermanent, "m: HTTP 413: RequestEntityTooLargeError: stand-in: status 413 requested"},
		{"express string 429", "[[status=429]] [[shape=string]]", taskfile.ClassTransient, "m: HTTP 429: TooManyRequestsError: stand-in"},
		{"express string 500", "[[status=500]] [[shape=string]]", taskfile.ClassTransient, "m: HTTP 500: InternalServerErrorError: stand-in"},
		{"message alone 500", "[[status=500]] [[shape=message]]", taskfile.ClassTransient, "m: HTTP 500 (server_error): stand-in: status 500 requested"},
		{"message alone 400", "[[status=400]] [[shape=message]]", taskfile.ClassPermanent, "m: HTTP 400 (invalid_request_error): stand-in"},
		{"fastapi detail 422", "[[status=422]] [[shape=detail]]", taskfile.ClassPermanent, "m: HTTP 422: stand-in: status 422 requested"},
		{"google array 400", "[[status=400]] [[shape=array]]", taskfile.ClassPermanent, "m: HTTP 400 (FAILED_PRECONDITION): stand-in: status 400 requested"},
		{"html 502", "[[status=502]] [[shape=html]]", taskfile.ClassTransient, "m: HTTP 502: 502 Bad Gateway stand-in: status 502 requested nginx"},
		{"html 413", "[[status=413]] [[shape=html]]", taskfile.ClassPermanent, "m: HTTP 413: 413 Request Entity Too Large"},
		{"plain text 503", "[[status=503]] [[shape=text]]", taskfile.ClassTransient, "m: HTTP 503: stand-in: status 503 requested"},
		{"empty 504", "[[status=504]] [[shape=empty]]", taskfile.ClassTransient, "m: HTTP 504: Gateway Timeout"},
		{"401", "[[status=401]]", taskfile.ClassAccount, "HTTP 401 (authentication_error)"},
		{"402", "[[status=402]] [[shape=text]]", taskfile.ClassAccount, "HTTP 402: stand-in"},
		{"403", "[[status=403]]", taskfile.ClassPermanent, "HTTP 403"},
		{"404", "[[status=404]] [[shape=string]]", taskfile.ClassPermanent, "HTTP 404: NotFoundError: stand-in"},
		{"408", "[[status=408]] [[shape=text]]", taskfile.ClassTransient, "HTTP 408"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, te, log := run(t, e, c, "m", tt.content)
			if te == nil {
				t.Fatal("success; want an error")
			}
			if te.Class != tt.class || !strings.Contains(te.Error(), tt.msg) {
				t.Errorf("got %s %q; want %s containing %q", te.Class, te, tt.class, tt.msg)
			}
			if strings.Contains(te.Error(), "json:") || strings.Contains(te.Error(), "network error") {
				t.Errorf("the body was not read as an error body: %q", te)
			}
			if !strings.Contains(log, "api call failed") {
				t.Errorf("failure not logged: %q", log)
			}
		})
	}
}

// Errors inside a 200 stream are classed by their code or type.
func TestExecutor_StreamErrors(t *testing.T) {
	s := stand(t, apistand.Options{})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m"})
	e := executor(t, c)
	tests := []struct {
		code       string
		class      taskfile.ErrorClass
		retryAfter time.Duration
	}{
		{"invalid_api_key", taskfile.ClassAccount, 0},
		{"insufficient_quota", taskfile.ClassAccount, 0},
		{"model_not_found", taskfile.ClassPermanent, 0},
		{"context_length_exceeded", taskfile.ClassPermanent, 0},
		{"rate_limit_exceeded", taskfile.ClassTransient, 2 * time.Second}, // "Please try again in 2s."
		{"server_error", taskfile.ClassTransient, 0},
		{"some_new_code", taskfile.ClassPermanent, 0}, // type invalid_request_error
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			_, te, _ := run(t, e, c, "m", "[[streamerror="+tt.code+"]] x")
			if te == nil {
				t.Fatal("success; want an error")
			}
			want := "m: error event in the answer stream (" + tt.code + "): "
			if te.Class != tt.class || te.RetryAfter != tt.retryAfter || !strings.Contains(te.Error(), want) {
				t.Errorf("got %s, RetryAfter %v, %q; want %s, %v, containing %q", te.Class, te.RetryAfter, te, tt.class, tt.retryAfter, want)
			}
		})
	}
}

// canned is a server on 127.0.0.1 that answers each request by the
// user content: the answers below, byte for byte.
type cannedAnswer struct {
	status int
	ctype  string
	header map[string]string
	body   string
}

func cannedServer(t *testing.T, answers map[string]cannedAnswer) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := decodeJSON(r, &body); err != nil || len(body.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		a, ok := answers[body.Messages[len(body.Messages)-1].Content]
		if !ok {
			http.Error(w, "no canned answer", http.StatusTeapot)
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if a.ctype != "" {
			w.Header().Set("Content-Type", a.ctype)
		}
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

const sse = "text/event-stream"

func chunkEvent(content string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return fmt.Sprintf(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`+"\n\n", content, f)
}

// Every form a 2xx answer takes: read for what it is, not for what was
// asked for or what its Content-Type says.
func TestExecutor_AnswerForms(t *testing.T) {
	completion := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"whole answer"},"finish_reason":"stop"}]}`
	answers := map[string]cannedAnswer{
		"json":               {200, "application/json", nil, completion},
		"json as sse":        {200, sse, nil, "\n" + completion},
		"sse as json":        {200, "application/json", nil, chunkEvent("a", "") + chunkEvent("b", "stop") + "data: [DONE]\n\n"},
		"sse no type":        {200, "", nil, ": keep-alive\n\n" + chunkEvent("a", "") + chunkEvent("b", "") + "data: [DONE]\n\n"},
		"sse finish no done": {200, sse, nil, chunkEvent("a", "") + chunkEvent("b", "stop")},
		"sse crlf":           {200, sse, nil, strings.ReplaceAll(chunkEvent("a", "")+chunkEvent("b", "stop")+"data: [DONE]\n\n", "\n", "\r\n")},
		"parts":              {200, "application/json", nil, `{"choices":[{"message":{"content":[{"type":"text","text":"pa"},{"type":"text","text":"rts"}]},"finish_reason":"stop"}]}`},
		"truncated stream":   {200, sse, nil, chunkEvent("a", "") + chunkEvent("b", "")},
		"html 200":           {200, "text/html", nil, "<html><head><title>Sign in</title></head><body>" + strings.Repeat("portal ", 100) + "</body></html>"},
		"empty 200":          {200, "application/json", nil, ""},
		"json no choices":    {200, "application/json", nil, `{"status":"ok","data":[]}`},
		"json error 200":     {200, "application/json", nil, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`},
		"json string error":  {200, "application/json", nil, `{"error":"PayloadTooLargeError","message":"request entity too large"}`},
		"event error":        {200, sse, nil, chunkEvent("a", "") + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"},
		"numeric code":       {200, sse, nil, chunkEvent("a", "") + `data: {"id":"c","error":{"code":502,"message":"upstream failed"},"choices":[{"delta":{"content":""},"finish_reason":"error"}]}` + "\n\n"},
		"numeric code 401":   {200, sse, nil, `data: {"error":{"code":401,"message":"User not found."}}` + "\n\n"},
		"sse junk":           {200, sse, nil, "data: upstream timed out\n\n"},
		"retry-after 503":    {503, "text/plain", map[string]string{"Retry-After": "4"}, "busy"},
		"quota 429":          {429, "application/json", map[string]string{"Retry-After": "20"}, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`},
		"redirect":           {301, "text/html", map[string]string{"Location": "https://api.example.com/v1/chat/completions"}, "<a>Moved</a>"},
		"redirect with key":  {302, "", map[string]string{"Location": "https://gw.example.com/v1?api_key=" + plantedKey}, ""},
		"content filter":     {200, "application/json", nil, `{"choices":[{"message":{"content":""},"finish_reason":"content_filter"}]}`},
	}
	c := testConfig(t, cannedServer(t, answers), config.ModelConfig{Name: "m", APIKeyEnv: "KEY_VAR"})
	e := executor(t, c)
	tests := []struct {
		content    string
		text       string // the answer; "" means an error is wanted
		class      taskfile.ErrorClass
		msg        string
		retryAfter time.Duration
	}{
		{content: "json", text: "whole answer"},
		{content: "json as sse", text: "whole answer"},
		{content: "sse as json", text: "ab"},
		{content: "sse no type", text: "ab"},
		{content: "sse finish no done", text: "ab"},
		{content: "sse crlf", text: "ab"},
		{content: "parts", text: "parts"},
		{content: "truncated stream", class: taskfile.ClassTransient, msg: "ended before the answer finished (2 events, 2 characters"},
		{content: "html 200", class: taskfile.ClassTransient, msg: "m: HTTP 200 answer is neither an event stream nor a chat completion (Content-Type text/html): <html><head><title>Sign in</title></head><body>portal portal"},
		{content: "empty 200", class: taskfile.ClassTransient, msg: "neither an event stream nor a chat completion (Content-Type application/json): an empty body"},
		{content: "json no choices", class: taskfile.ClassTransient, msg: `(Content-Type application/json): {"status":"ok","data":[]}`},
		{content: "json error 200", class: taskfile.ClassAccount, msg: "m: error in an HTTP 200 answer (invalid_api_key): Incorrect API key provided"},
		{content: "json string error", class: taskfile.ClassTransient, msg: "PayloadTooLargeError: request entity too large"},
		{content: "event error", class: taskfile.ClassTransient, msg: "error event in the answer stream (overloaded_error): Overloaded"},
		{content: "numeric code", class: taskfile.ClassTransient, msg: "error event in the answer stream (502): upstream failed"},
		{content: "numeric code 401", class: taskfile.ClassAccount, msg: "(401): User not found."},
		{content: "sse junk", class: taskfile.ClassTransient, msg: "neither an event stream nor a chat completion (Content-Type text/event-stream): upstream timed out"},
		{content: "retry-after 503", class: taskfile.ClassTransient, msg: "HTTP 503: busy", retryAfter: 4 * time.Second},
		{content: "quota 429", class: taskfile.ClassAccount, msg: "HTTP 429 (insufficient_quota): You exceeded your current quota"},
		{content: "redirect", class: taskfile.ClassPermanent, msg: "HTTP 301: <a>Moved</a>; redirected to https://api.example.com/v1/chat/completions: set baseURL to it"},
		{content: "redirect with key", class: taskfile.ClassPermanent, msg: "HTTP 302: Found; redirected to https://gw.example.com/v1?api_key=[redacted]: set baseURL to it"},
		{content: "content filter", class: taskfile.ClassPermanent, msg: "empty answer from model m (finish_reason content_filter)"},
	}
	for _, tt := range tests {
		t.Run(tt.content, func(t *testing.T) {
			res, te, log := run(t, e, c, "m", tt.content)
			if tt.text != "" {
				if te != nil || res.Text != tt.text {
					t.Fatalf("got %q, %v; want the answer %q", res.Text, te, tt.text)
				}
				if !strings.Contains(log, "api answer") {
					t.Errorf("answer not logged: %q", log)
				}
				return
			}
			if te == nil {
				t.Fatalf("answer %q; want a %s error", res.Text, tt.class)
			}
			if te.Class != tt.class || te.RetryAfter != tt.retryAfter || !strings.Contains(te.Error(), tt.msg) {
				t.Errorf("got %s, RetryAfter %v, %q; want %s, %v, containing %q", te.Class, te.RetryAfter, te, tt.class, tt.retryAfter, tt.msg)
			}
			if fr := keyFragments(plantedKey, te.Error()+log); len(fr) > 0 {
				t.Errorf("pieces of the key kept: %v", fr)
			}
		})
	}
	// A body that is neither is quoted by its first 200 characters only.
	_, te, _ := run(t, e, c, "m", "html 200")
	if _, quote, _ := strings.Cut(te.Error(), "text/html): "); len(quote) != keepBody+len("...") {
		t.Errorf("quoted %d bytes of the body: %q; want %d and ...", len(quote), quote, keepBody)
	}
}

// A ModelConfig built without Check (an executor test or a caller of its
// own) sends max_tokens; the stand-in answers a JSON completion to a
// streamed request as some servers do.
func TestExecutor_JSONAnswerToStream(t *testing.T) {
	s := stand(t, apistand.Options{})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m"})
	e := executor(t, c)
	res, te, log := run(t, e, c, "m", "[[json]] a whole answer")
	if te != nil || res.Text != "Answer: a whole answer" {
		t.Fatalf("got %q, %v", res.Text, te)
	}
	if r := s.Requests()[0]; !r.Stream {
		t.Error("the request did not ask for a stream")
	}
	if !strings.Contains(log, "form=json") {
		t.Errorf("the log does not say the answer came as JSON: %q", log)
	}
	_, te, _ = run(t, e, c, "m", "[[junk]] x")
	if te == nil || te.Class != taskfile.ClassTransient || !strings.Contains(te.Error(), "<!DOCTYPE html><html><head><title>Maintenance</title>") {
		t.Errorf("junk: %v", te)
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		body           string
		msg, code, typ string
		numCode        int
	}{
		{`{"error":{"message":"m1","type":"t1","param":null,"code":"c1"}}`, "m1", "c1", "t1", 0},
		{`{"error":{"message":"m1","type":"t1","code":null}}`, "m1", "", "t1", 0},
		{`{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`, "slow down", "429", "RESOURCE_EXHAUSTED", 429},
		{`[{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}]`, "bad", "400", "INVALID_ARGUMENT", 400},
		{`{"error":"PayloadTooLargeError","message":"request entity too large","status":413}`, "PayloadTooLargeError: request entity too large", "", "", 0},
		{`{"error":"Not Found","message":"Cannot POST /v2/chat"}`, "Not Found: Cannot POST /v2/chat", "", "", 0},
		{`{"error":"boom"}`, "boom", "", "", 0},
		{`{"error":"Bad","message":"Bad request body"}`, "Bad request body", "", "", 0},
		{`{"object":"error","message":"m2","type":"BadRequestError","code":400}`, "m2", "400", "BadRequestError", 400},
		{`{"message":"Forbidden"}`, "Forbidden", "", "", 0},
		{`{"detail":"Not authenticated"}`, "Not authenticated", "", "", 0},
		{`{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`, `[{"loc":["body","messages"],"msg":"field required"}]`, "", "", 0},
		{`{"errors":[{"code":10000,"message":"Authentication error"}]}`, "Authentication error", "10000", "", 0},
		{`{"status":"weird"}`, `{"status":"weird"}`, "", "", 0},
		{`{"error":{"type":"x"}}`, `{"type":"x"}`, "", "x", 0},
		{"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>", "502 Bad Gateway nginx", "", "", 0},
		{"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error</title></head><body><pre>PayloadTooLargeError: request entity too large<br> &nbsp; &nbsp;at readStream</pre></body></html>", "Error: PayloadTooLargeError: request entity too large at readStream", "", "", 0},
		{"<html><head><style>p{}</style><script>x()</script></head><body>Denied &amp; logged</body></html>", "Denied & logged", "", "", 0},
		{"upstream connect error or disconnect/reset before headers", "upstream connect error or disconnect/reset before headers", "", "", 0},
		{"", "", "", "", 0},
		{"{not json", "{not json", "", "", 0},
	}
	for _, tt := range tests {
		e := parseErrorBody([]byte(tt.body))
		if e.Message != tt.msg || e.Code != tt.code || e.Type != tt.typ || e.NumCode != tt.numCode {
			t.Errorf("parseErrorBody(%q) = %+v; want message %q code %q type %q numCode %d", tt.body, e, tt.msg, tt.code, tt.typ, tt.numCode)
		}
	}
}

func TestServerError_Class(t *testing.T) {
	tests := []struct {
		e    serverError
		want taskfile.ErrorClass
	}{
		{serverError{Status: 429, Code: "insufficient_quota"}, taskfile.ClassAccount},
		{serverError{Status: 429, Type: "insufficient_quota"}, taskfile.ClassAccount},
		{serverError{Status: 429, Code: "rate_limit_exceeded"}, taskfile.ClassTransient},
		{serverError{Status: 429}, taskfile.ClassTransient},
		{serverError{Status: 404, Code: "model_not_found"}, taskfile.ClassPermanent},
		{serverError{Status: 401, Code: "invalid_api_key"}, taskfile.ClassAccount},
		{serverError{Status: 401}, taskfile.ClassAccount},
		{serverError{Status: 402}, taskfile.ClassAccount},
		{serverError{Status: 403}, taskfile.ClassPermanent},
		{serverError{Status: 413}, taskfile.ClassPermanent},
		{serverError{Status: 529, Type: "overloaded_error"}, taskfile.ClassTransient},
		{serverError{Status: 500, Type: "invalid_request_error"}, taskfile.ClassTransient}, // a generic type does not beat the status
		{serverError{Type: "invalid_request_error"}, taskfile.ClassPermanent},
		{serverError{Type: "server_error"}, taskfile.ClassTransient},
		{serverError{Code: "500", NumCode: 500}, taskfile.ClassTransient},
		{serverError{Code: "400", NumCode: 400}, taskfile.ClassPermanent},
		{serverError{Code: "RATE_LIMIT_EXCEEDED"}, taskfile.ClassTransient},
		{serverError{}, taskfile.ClassTransient},
	}
	for _, tt := range tests {
		if got := tt.e.class(); got != tt.want {
			t.Errorf("%+v: class %s; want %s", tt.e, got, tt.want)
		}
	}
}

func TestRetryHint(t *testing.T) {
	tests := []struct {
		msg  string
		want time.Duration
	}{
		{"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.004s.", 2004 * time.Millisecond},
		{"Please try again in 20ms.", 20 * time.Millisecond},
		{"Please try again in 6m0s. Visit ...", 6 * time.Minute},
		{"please retry after 3 seconds", 3 * time.Second},
		{"Retry after 1.5 minutes", 90 * time.Second},
		{"try again in 250 milliseconds", 250 * time.Millisecond},
		{"Try again later", 0},
		{"try again in 99999h", 0},
		{"", 0},
	}
	for _, tt := range tests {
		if got := retryHint(tt.msg); got != tt.want {
			t.Errorf("retryHint(%q) = %v; want %v", tt.msg, got, tt.want)
		}
	}
}

func decodeJSON(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(v)
}

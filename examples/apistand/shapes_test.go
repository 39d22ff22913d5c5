package apistand

import (
	"strings"
	"testing"
)

func TestParseDirectives_Shapes(t *testing.T) {
	tests := []struct {
		in   string
		want Directives
	}{
		{"[[status=413]] [[shape=String]] x", Directives{Status: 413, Shape: "string"}},
		{"[[streamerror=invalid_api_key]] x", Directives{StreamError: "invalid_api_key"}},
		{"[[json]] [[junk]] x", Directives{JSON: true, Junk: true}},
		{"[[echokey=480/600]] x", Directives{Echo: true, EchoAt: 480, EchoLen: 600}},
		{"[[echokey=0/0]] x", Directives{Echo: true}},
		{"[[echokey=7/6]] [[echokey=a/6]] [[echokey=-1/6]] x", Directives{}},
	}
	for _, tt := range tests {
		if d, _ := ParseDirectives(tt.in); d != tt.want {
			t.Errorf("ParseDirectives(%q) = %+v; want %+v", tt.in, d, tt.want)
		}
	}
}

func TestServer_Shapes(t *testing.T) {
	s := start(t, Options{})
	tests := []struct {
		content, want string
		code          int
	}{
		{"[[status=413]] [[shape=string]]", `{"error":"RequestEntityTooLargeError","message":"stand-in: status 413 requested","status":413}`, 413},
		{"[[status=500]] [[shape=message]]", `{"code":500,"message":"stand-in: status 500 requested","object":"error","type":"server_error"}`, 500},
		{"[[status=422]] [[shape=detail]]", `{"detail":"stand-in: status 422 requested"}`, 422},
		{"[[status=400]] [[shape=array]]", `[{"error":{"code":400,"message":"stand-in: status 400 requested","status":"FAILED_PRECONDITION"}}]`, 400},
		{"[[status=502]] [[shape=html]]", "<title>502 Bad Gateway</title>", 502},
		{"[[status=503]] [[shape=text]]", "stand-in: status 503 requested", 503},
		{"[[status=400]] [[echokey=3/5]]", `"message":"TheAuthorization: Bearer k1 q"`, 400},
		{"[[streamerror=invalid_api_key]]", `data: {"error":{"code":"invalid_api_key","message":"stand-in: error invalid_api_key","param":null,"type":"invalid_request_error"}}`, 200},
		{"[[json]] hi", `"object":"chat.completion"`, 200},
		{"[[junk]]", "<title>Maintenance</title>", 200},
	}
	for _, tt := range tests {
		code, _, body := post(t, t.Context(), s, "k1", map[string]any{"model": "m", "stream": true, "messages": msgs("", tt.content)})
		if code != tt.code || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s: %d %s; want %d containing %s", tt.content, code, body, tt.code, tt.want)
		}
	}
}

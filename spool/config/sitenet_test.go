package config

import "testing"

func TestSiteNetwork_MatchesURL(t *testing.T) {
	tests := []struct {
		key, url string
		want     bool
	}{
		{"/api/chat", "https://x.test/api/chat?x=1", true},
		{"/api/chat", "https://x.test/api/conversation", false},
		{"/api/chat/*/messages/*", "https://x.test/api/chat/3f2a9c0d11/messages/17", true},
		{"/api/chat/*/messages/*", "https://x.test/api/chat/other-conversation/messages/2/stream", true},
		{"/api/chat/*/messages/*", "https://x.test/api/chat//messages/2", false},     // a * is at least one character
		{"/api/chat/*/completion", "https://x.test/api/chat/a/b/completion", false},  // one segment, never a /
		{"/api/chat/*/completion", "https://x.test/api/chat/a.b+c/completion", true}, // the rest is literal
		{"/v1/*.json", "https://x.test/v1/abc.json", true},
		{"/v1/*.json", "https://x.test/v1/abcXjson", false},
	}
	for _, tt := range tests {
		if got := (SiteNetwork{URL: tt.key}).MatchesURL(tt.url); got != tt.want {
			t.Errorf("MatchesURL(%q, %q) = %v, want %v", tt.key, tt.url, got, tt.want)
		}
	}
}

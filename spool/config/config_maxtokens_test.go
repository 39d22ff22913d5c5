package config

import (
	"strings"
	"testing"
)

func TestConfig_MaxTokensField(t *testing.T) {
	tests := []struct {
		name, field, want, wantErr string
	}{
		{"default", "", MaxTokensDefault, ""},
		{"max_tokens", "max_tokens", MaxTokensDefault, ""},
		{"max_completion_tokens", "max_completion_tokens", MaxCompletionTokens, ""},
		{"typo", "max_completion_token", "", `models[a].maxTokensField: "max_completion_token" is not max_tokens (the default) or max_completion_tokens`},
		{"camel case", "maxCompletionTokens", "", `"maxCompletionTokens" is not max_tokens`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := "models: [{name: a, kind: api, baseURL: 'http://x/v1', maxTokens: 9"
			if tt.field != "" {
				in += ", maxTokensField: " + tt.field
			}
			c, err := ParseConfig([]byte(in + "}]\n"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Models[0].MaxTokensField; got != tt.want {
				t.Errorf("maxTokensField %q; want %q", got, tt.want)
			}
		})
	}
}

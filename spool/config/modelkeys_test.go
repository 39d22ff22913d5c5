package config

import (
	"strings"
	"testing"
)

func TestConfig_ModelKeys(t *testing.T) {
	web := "sites: {s: {url: 'http://127.0.0.1:9/', input: a, send: b, answer: c}}\nmodels: [{name: a, kind: web, site: s"
	api := "models: [{name: a, kind: api, baseURL: 'http://x/v1'"
	tests := []struct {
		name, in, tokenizer, schemaMode, wantErr string
	}{
		{"defaults", api, TokenizerO200k, SchemaInstruction, ""},
		{"cl100k", api + ", tokenizer: cl100k_base", TokenizerCl100k, SchemaInstruction, ""},
		{"native api", api + ", schemaMode: native", TokenizerO200k, SchemaNative, ""},
		{"web defaults", web, TokenizerO200k, SchemaInstruction, ""},
		{"unknown tokenizer", api + ", tokenizer: p50k_base", "", "", `models[a].tokenizer: "p50k_base" is not o200k_base (the default) or cl100k_base`},
		{"unknown mode", api + ", schemaMode: strict", "", "", `models[a].schemaMode: "strict" is not instruction (the default) or native`},
		{"native web", web + ", schemaMode: native", "", "", `models[a].schemaMode: native is for api models`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.in + "}]\n"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v; want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := c.Models[0]; m.Tokenizer != tt.tokenizer || m.SchemaMode != tt.schemaMode || m.NativeSchema() != (tt.schemaMode == SchemaNative) {
				t.Errorf("tokenizer %q, schemaMode %q; want %q, %q", m.Tokenizer, m.SchemaMode, tt.tokenizer, tt.schemaMode)
			}
		})
	}
}

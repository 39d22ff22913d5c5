package lanes

import (
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The schema reaches the model where it reads: after the prompt, after
// the content for a model whose prompt is never sent, and only as "Answer
// in JSON." where the endpoint takes it natively; a retry after a
// mismatch says what did not match.
func TestWithSchema(t *testing.T) {
	const sch = `{"type":"object"}`
	tests := []struct {
		name                    string
		m                       config.ModelConfig
		prompt, errText         string
		wantPrompt, wantContent string
	}{
		{"instruction", config.ModelConfig{}, "Tag it.", "", "Tag it.\n\nAnswer with JSON only, no text before or after it, matching this JSON Schema:\n" + sch, "article"},
		{"no prompt", config.ModelConfig{}, "", "", "Answer with JSON only, no text before or after it, matching this JSON Schema:\n" + sch, "article"},
		{"native", config.ModelConfig{SchemaMode: config.SchemaNative}, "Tag it.", "", "Tag it.\n\nAnswer in JSON.", "article"},
		{"needEmptyPrompt", config.ModelConfig{NeedEmptyPrompt: true}, "Tag it.", "at /a: bad", "Tag it.",
			"article\n\nAnswer with JSON only, no text before or after it, matching this JSON Schema:\n" + sch + "\n\nYour previous answer was refused: at /a: bad. Answer again, with the JSON only."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := &taskfile.Task{Prompt: tt.prompt, Content: "article", Schema: sch}
			if tt.errText != "" {
				task.ErrorClass, task.Error = taskfile.ClassSchema, tt.errText
			}
			got := withSchema(task, &tt.m)
			if got.Prompt != tt.wantPrompt || got.Content != tt.wantContent {
				t.Errorf("prompt %q\ncontent %q\nwant %q\n%q", got.Prompt, got.Content, tt.wantPrompt, tt.wantContent)
			}
		})
	}
	if got := withSchema(&taskfile.Task{Prompt: "p", Content: "c"}, &config.ModelConfig{}); got.Prompt != "p" || strings.Contains(got.Content, "JSON") {
		t.Errorf("no schema: %+v", got)
	}
}

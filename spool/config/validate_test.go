package config

import (
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestCheckOutputPath(t *testing.T) {
	for p, ok := range map[string]bool{
		"a.txt": true, "dir/a.txt": true, "./a": true,
		"/etc/x": false, "../x": false, "a/../../x": false, "..": false, ".": false, "a\nb": false, "a/../b": false,
	} {
		if err := CheckOutputPath(p); (err == nil) != ok {
			t.Errorf("CheckOutputPath(%q) = %v, want ok=%v", p, err, ok)
		}
	}
}

func TestValidate_ControlCharacters(t *testing.T) {
	cfg, err := ParseConfig([]byte("models: [{name: fast, kind: api, baseURL: 'http://127.0.0.1:9/v1'}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ok := func(tk *taskfile.Task) *taskfile.Task { tk.TaskID, tk.Model = "t", "fast"; return tk }
	tests := []struct {
		name   string
		task   *taskfile.Task
		reason string
	}{
		{"tab and newline in content", ok(&taskfile.Task{Content: "a\tb\nc"}), ""},
		{"emoji and CJK", ok(&taskfile.Task{Content: "🌷 春", Batch: "春季 🌷"}), ""},
		{"ESC in content", ok(&taskfile.Task{Content: "a\x1b[2J"}), "content: contains the control character U+001B (ESC) at character 2"},
		{"CR alone in content", ok(&taskfile.Task{Content: "a\rb"}), "U+000D (carriage return)"},
		{"DEL in prompt", ok(&taskfile.Task{Content: "x", Prompt: "a\x7f"}), "prompt: contains the control character U+007F (DEL)"},
		{"C1 in content", ok(&taskfile.Task{Content: "a\u009bb"}), "U+009B"},
		{"newline in batch", ok(&taskfile.Task{Content: "x", Batch: "a\nb"}), "batch: contains the control character U+000A (newline)"},
		{"tab in batch", ok(&taskfile.Task{Content: "x", Batch: "a\tb"}), "batch: contains"},
		{"NUL in output", ok(&taskfile.Task{Content: "x", Output: "a\x00b"}), "output: contains the control character U+0000 (NUL)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rej := Validate(cfg, tt.task, taskfile.KindAPI)
			switch {
			case tt.reason == "" && rej != nil:
				t.Errorf("refused: %s", rej.Msg)
			case tt.reason != "" && (rej == nil || !strings.Contains(rej.Msg, tt.reason)):
				t.Errorf("got %v, want %q", rej, tt.reason)
			case rej != nil && strings.ContainsFunc(rej.Msg, func(r rune) bool { return r < 0x20 || r == 0x7f }):
				t.Errorf("the reason carries a control character: %q", rej.Msg)
			}
		})
	}
	// CRLF from a quoted escape is the same text with LF.
	tk, err := taskfile.DecodeTask([]byte("taskId: t\nmodel: fast\ncontent: \"a\\r\\nb\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tk.ResetForIntake()
	if rej := Validate(cfg, tk, taskfile.KindAPI); rej != nil || tk.Content != "a\nb" {
		t.Errorf("CRLF: %v %q", rej, tk.Content)
	}
}

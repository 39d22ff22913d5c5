package taskfile

import (
	"strings"
	"testing"
)

func TestSplitThink(t *testing.T) {
	for _, c := range []struct {
		name, in, answer, thinking string
	}{
		{"plain answer", "# Title\n\nText.", "# Title\n\nText.", ""},
		{"leading block", "<think>\nThe user wants a title.\n</think>\n\n# Title", "# Title", "The user wants a title."},
		{"white space before", "\n  <think>a</think>b", "b", "a"},
		{"two blocks", "<think>a</think>\n<think>b</think>answer", "answer", "a\n\nb"},
		{"empty block", "<think>\n\n</think>\n\nanswer", "answer", ""},
		{"never closed", "<think>still thinking", "", "still thinking"},
		{"tag later is the answer's", "Use <think>…</think> tags.", "Use <think>…</think> tags.", ""},
		{"close only", "reasoning</think>answer", "reasoning</think>answer", ""},
		{"chinese", "<think>用户想要一个标题。</think>\n\n# 标题", "# 标题", "用户想要一个标题。"},
		{"markdown thinking", "<think>- one\n- two\n\n```go\nx\n```</think>ok", "ok", "- one\n- two\n\n```go\nx\n```"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, th := SplitThink(c.in)
			if a != c.answer || th != c.thinking {
				t.Fatalf("SplitThink(%q) = %q, %q; want %q, %q", c.in, a, th, c.answer, c.thinking)
			}
		})
	}
}

// FuzzSplitThink: whatever the text, the thinking never holds a tag the
// splitter took for a boundary, nothing is invented (every part is text
// of the input), and text that does not start with <think> is left whole.
func FuzzSplitThink(f *testing.F) {
	for _, s := range []string{"", "x", "<think>a</think>b", "<think>", "</think>", " <think>a<think>b</think>c", "<think>a</think><think>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, th := SplitThink(s)
		if !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), thinkOpen) {
			if a != s || th != "" {
				t.Fatalf("SplitThink(%q) = %q, %q: want the text whole", s, a, th)
			}
			return
		}
		if strings.Contains(th, thinkClose) {
			t.Fatalf("SplitThink(%q): thinking %q holds %s", s, th, thinkClose)
		}
		if !strings.Contains(s, a) {
			t.Fatalf("SplitThink(%q): answer %q is not in the text", s, a)
		}
		for _, p := range strings.Split(th, "\n\n") {
			if !strings.Contains(s, p) {
				t.Fatalf("SplitThink(%q): thinking part %q is not in the text", s, p)
			}
		}
		if a2, th2 := SplitThink(a); strings.HasPrefix(strings.TrimLeft(a, " \t\r\n"), thinkOpen) == false && (a2 != a || th2 != "") {
			t.Fatalf("SplitThink(answer %q) split again: %q, %q", a, a2, th2)
		}
	})
}

// TestTask_DropDaemonFields: the thinking and the modes an attempt ran in
// are the daemon's to write: a record that failed its seal, or a drop
// that names them, keeps neither.
func TestTask_DropDaemonFields(t *testing.T) {
	for _, c := range []struct {
		name string
		task Task
	}{
		{"reasoning", Task{TaskID: "a", Model: "m", Content: "c", Reasoning: "planted thinking"}},
		{"modes", Task{TaskID: "a", Model: "m", Content: "c", Attempts: []AttemptRecord{{N: 1, Modes: "deepThink on"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := c.task
			if !tk.DropDaemonFields() {
				t.Fatal("nothing dropped")
			}
			if tk.Reasoning != "" || len(tk.Attempts) != 0 || tk.Content != "c" {
				t.Fatalf("after the drop: %+v", tk)
			}
		})
	}
}

// TestScanSummary_Reasoning: the scan says whether a record keeps
// thinking, as the decoder does, and declines what it cannot be sure of.
func TestScanSummary_Reasoning(t *testing.T) {
	const head = "taskId: a\nmodel: m\nstate: success\n"
	for _, c := range []struct {
		name, tail string
		want, ok   bool
	}{
		{"encoded block", "reasoning: |-\n  why\n  because\n", true, true},
		{"plain", "reasoning: why\n", true, true},
		{"none", "result: x\n", false, true},
		{"empty block", "reasoning: |-\nresult: x\n", false, false},
		{"null", "reasoning: null\n", false, false},
		{"quoted", "reasoning: \"a: b\"\n", false, false},
		{"value below", "reasoning:\n  why\n", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ok := ScanSummary([]byte(head + c.tail))
			if ok != c.ok || ok && s.Reasoning != c.want {
				t.Fatalf("ScanSummary: reasoning %v, ok %v; want %v, %v", s.Reasoning, ok, c.want, c.ok)
			}
			if tk, err := DecodeTask([]byte(head + c.tail)); err == nil && ok && SummaryOf(tk) != s {
				t.Fatalf("scan %+v != decode %+v", s, SummaryOf(tk))
			}
		})
	}
	tk := &Task{TaskID: "a", Model: "m", State: StateSuccess, Result: "# A", Reasoning: "line one\n\nline two: with a colon"}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := ScanSummary(data); !ok || !s.Reasoning {
		t.Fatalf("an encoded record with thinking: %+v, %v\n%s", s, ok, data)
	}
}

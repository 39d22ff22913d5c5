package taskfile

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestDecodeTask(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // substring; "" means success
		check   func(*testing.T, *Task)
	}{
		{"minimal", "model: m\ncontent: hi\n", "", func(t *testing.T, k *Task) {
			if k.Model != "m" || k.Content != "hi" {
				t.Errorf("got %+v", k)
			}
		}},
		{"bom and crlf", "\xEF\xBB\xBFmodel: m\r\ncontent: hi\r\n", "", func(t *testing.T, k *Task) {
			if k.Content != "hi" {
				t.Errorf("content %q", k.Content)
			}
		}},
		{"unknown field", "model: m\ncontent: hi\ncolour: red\n", "yaml: line 3: field colour not found (unknown field)", nil},
		{"syntax", "model: [m\ncontent: hi\n", "yaml:", nil},
		{"not utf8", "model: m\ncontent: \xff\xfe\n", "not valid UTF-8", nil},
		{"nul", "model: m\ncontent: a\x00b\n", "NUL", nil},
		{"empty", "  \n", "empty", nil},
		{"two documents", "model: m\ncontent: a\n---\nmodel: n\n", "second document", nil},
		{"not a mapping", "- a\n- b\n", "cannot unmarshal", nil},
		{"too large", "content: " + strings.Repeat("a", MaxTaskSize) + "\n", "larger than 1 MiB", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTask([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func TestDecodeTask_AliasBomb(t *testing.T) {
	bomb := `a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
content: [*g,*g,*g,*g,*g,*g,*g,*g,*g]
`
	if _, err := DecodeTask([]byte(bomb)); err == nil {
		t.Fatal("alias bomb accepted")
	}
}

// Encode then decode gives the same task, in a stable, readable order.
func TestTask_Encode(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 123456789, time.UTC)
	in := &Task{TaskID: "t1", ModelKind: KindAPI, Model: "m", Batch: "b", Content: "line one\nline two",
		State: StateRunning, Attempt: 2, SubmittedAt: now, StartedAt: now, HeartbeatAt: now, Owner: "h:1"}
	data, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("taskId: t1\nmodelKind: api\nmodel: m\n")) {
		t.Errorf("field order changed:\n%s", data)
	}
	if bytes.Contains(data, []byte("finishedAt")) || bytes.Contains(data, []byte("notBefore")) {
		t.Errorf("zero times written:\n%s", data)
	}
	out, err := DecodeTask(data)
	if err != nil {
		t.Fatal(err)
	}
	if out.Content != in.Content || out.Attempt != 2 || !out.StartedAt.Equal(now.Truncate(time.Millisecond)) {
		t.Errorf("round trip: %+v", out)
	}
}

func TestValidTaskID(t *testing.T) {
	for id, want := range map[string]bool{
		"a": true, "A-1_b.c": true, strings.Repeat("x", MaxTaskIDBytes): true,
		"春季广告": true, "ä": true, "café-01": true, "広告_テスト.v2": true, "Привет": true, "٣٤": true,
		"हिन्दी":  true, // combining vowel signs after the first letter
		"か\u3099": true, // decomposed (NFD) が, as macOS names files
		"コンソール":   true, "CONSOLE": true, "COM10": true, "nul-report": true,
		strings.Repeat("春", MaxTaskIDBytes/3): true,
		"":                                    false, ".a": false, "-a": false, "a/b": false, `a\b`: false, "..": false, "a..b": false,
		strings.Repeat("x", MaxTaskIDBytes+1): false, strings.Repeat("春", MaxTaskIDBytes/3+1): false,
		"a b": false, "a\n": false, "a\x00": false, "a\x1b[2J": false, "\u0301a": false, "🌷": false, "a🌷": false,
		"CON": false, "con": false, "Nul.txt": false, "COM1": false, "lpt9.log": false, "COM0": false,
		"a.": false, "a<b": false, "a:b": false, `a"b`: false, "a|b": false, "a?b": false, "a*b": false, "a\u202eb": false,
		"\xff": false, "a\u3000b": false,
	} {
		if got := ValidTaskID(id); got != want {
			t.Errorf("ValidTaskID(%q) = %v, want %v", id, got, want)
		}
	}
}

func FuzzDecodeTask(f *testing.F) {
	for _, s := range []string{
		"model: m\ncontent: hi\n",
		"taskId: x\nmodel: m\ncontent: |\n  a\n  b\nbatch: b\noutput: o/x.txt\n",
		"\xEF\xBB\xBFmodel: m\r\ncontent: hi\r\n",
		"a: &a [x]\nb: [*a, *a]\n",
		"state: running\nattempt: 3\nheartbeatAt: 2026-01-01T00:00:00Z\n",
		"- a\n", "{", "model: [", "\x00",
		"taskId: 春季广告\nmodel: m\ncontent: \"🌷 \\U0001F337 \\uE000\"\nbatch: 🌷\n",
		"model: m\ncontent: \"a\\r\\nb\\e\"\nresult: |\n  𝄞\n",
		"\xff\xfem\x00o\x00d\x00e\x00l\x00:\x00 \x00m\x00\n\x00",
		"\xfe\xff\x00m\x00:\x00 \x00m",
		"model: m\ncontent: \xb4\xba\xbc\xbe\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := DecodeTask(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		// Whatever decodes must encode and decode to the same fields.
		enc, err := task.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeTask(enc)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", enc, err)
		}
		for i, p := range task.textFields() {
			if q := again.textFields()[i]; *p != *q {
				t.Fatalf("round trip changed text field %d: %q became %q", i, *p, *q)
			}
		}
		if bytes.Contains(enc, []byte(`\U0001`)) && !bytes.Contains(data, []byte(`\U0001`)) && !bytes.Contains(data, []byte(`\\U0001`)) {
			t.Fatalf("a character outside the BMP came back escaped:\n%s", enc)
		}
	})
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A chained task keeps its parents at intake, and a filled one runs again
// as submitted: its template back as the content, the template cleared.
func TestTask_ResetForIntake(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          Task
		wantContent string
	}{
		{"plain", Task{TaskID: "a", Content: "x\r\ny", Result: "r", Owner: "h:1"}, "x\ny"},
		{"chained, not filled", Task{TaskID: "a", After: []string{"p"}, Content: "{{p.result}}"}, "{{p.result}}"},
		{"chained, filled", Task{TaskID: "a", After: []string{"p"}, Content: "the outline", Template: "use {{p.result}}"}, "use {{p.result}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := tc.in
			tk.ResetForIntake()
			if tk.Content != tc.wantContent || tk.Template != "" || tk.Result != "" || tk.Owner != "" || len(tk.After) != len(tc.in.After) {
				t.Errorf("after reset: %+v, want content %q, template and daemon fields cleared, after kept", tk, tc.wantContent)
			}
		})
	}
}

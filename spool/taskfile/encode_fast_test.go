package taskfile

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fastAndYAML encodes the rounded task both ways: appendTask's bytes and
// whether it took the task, and yaml.v3's.
func fastAndYAML(t testing.TB, tk *Task) (fast []byte, ok bool, want []byte) {
	t.Helper()
	c := tk.rounded()
	fast, ok = appendTask(nil, c)
	want, err := c.encodeYAML()
	if err != nil {
		t.Fatal(err)
	}
	return fast, ok, want
}

// TestTask_EncodeFast: for every string shape, appendTask writes yaml.v3's
// bytes exactly or leaves the task to yaml.v3; and it takes the shapes a
// task usually has, so the fast path is not vacuous.
func TestTask_EncodeFast(t *testing.T) {
	for _, tc := range []struct {
		s    string
		fast bool // appendTask must take it (in a top-level field)
	}{
		{"Write launch copy for the spring sale.", true},
		{"写一段春季促销的文案，三百字以内。", true},
		{"héllo wörld", true},
		{"tp-0-000001", true},
		{"ci-host:4242", true},
		{"transient: HTTP 429 Too Many Requests", true}, // single-quoted
		{"it's a: test", true},
		{"ends with colon:", true},
		{"trailing space ", true},
		{"a #hashtag", true},
		{"a#b", true},
		{"line one\nline two", true},
		{"line one\nline two\n", true},
		{"para\n\nafter a blank line\n", true},
		{"first\n  indented second\n", true},
		{"# Title\n\n- item\n- item: two\n", true}, // a block may start with an indicator
		{"Title\n\n- item\n- item: two\n", true},
		{"", true},
		{"true", false}, {"No", false}, {"null", false}, {"~", false},
		{"123", false}, {"2026-12-03", false}, {"1e3", false}, {"-dash", false}, {"- item", false},
		{"*star", false}, {"&amp", false}, {"!tag", false}, {"'quoted'", false}, {`"dq"`, false},
		{"tab\there", false}, {"emoji 🌷", false}, {"nel\u0085x", false}, {"ls\u2028x", false},
		{"bom\ufeffx", false}, {"ctl\x01x", false}, {"bad \xff utf8", false},
		{" leading space", false}, {"\nleading break", false}, {"two breaks\n\n", false},
		{"space before break \nx", false}, {"cr\r\nlf", false}, {"ends space\nx ", false},
		{"ideographic\u3000space", true}, {"private\ue000use", true},
	} {
		for _, field := range []string{"content", "result", "model", "error", "owner"} {
			tk := &Task{TaskID: "t-1", Model: "fast", Content: "c"}
			switch field {
			case "content":
				tk.Content = tc.s
			case "result":
				tk.Result = tc.s
			case "model":
				tk.Model = tc.s
			case "error":
				tk.Error = tc.s
			case "owner":
				tk.Attempts = []AttemptRecord{{N: 1, Owner: tc.s}}
			}
			fast, ok, want := fastAndYAML(t, tk)
			if ok && !bytes.Equal(fast, want) {
				t.Errorf("%s %q: appendTask wrote\n%s\nyaml.v3 writes\n%s", field, tc.s, fast, want)
			}
			if top := field != "owner"; top && tc.fast && !ok {
				t.Errorf("%s %q: appendTask left it to yaml.v3", field, tc.s)
			}
			if !tc.fast && ok {
				t.Errorf("%s %q: appendTask took a string it should leave to yaml.v3", field, tc.s)
			}
		}
	}
}

// testUsages are the shapes of a usage the fast encoder must write as
// yaml.v3 does.
var testUsages = []Usage{{PromptTokens: 12}, {CompletionTokens: 34}, {PromptTokens: 12, CompletionTokens: 34},
	{PromptTokens: 12, CompletionTokens: 34, ReasoningTokens: 20, CachedTokens: 8}, {PromptTokens: 3, CompletionTokens: 5, Estimated: true}}

// TestTask_EncodeFastFields sets every field of Task, its SendRecord and
// its AttemptRecords in turn, by reflection: a field added to the format
// and not to appendTask fails here.
func TestTask_EncodeFastFields(t *testing.T) {
	at := time.Date(2026, 12, 3, 4, 5, 6, 789_123_456, time.FixedZone("CST", 8*3600))
	set := func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString("some value")
		case reflect.Int, reflect.Int64:
			v.SetInt(7)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Struct:
			v.Set(reflect.ValueOf(at))
		default:
			t.Fatalf("field of kind %s: teach appendTask and this test", v.Kind())
		}
	}
	check := func(name string, tk *Task) {
		t.Helper()
		b, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		c := tk.rounded()
		want, err := c.encodeYAML()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: Encode wrote\n%s\nyaml.v3 writes\n%s", name, b, want)
		}
		if _, ok := appendTask(nil, c); !ok {
			t.Errorf("%s: appendTask left it to yaml.v3", name)
		}
	}
	tt := reflect.TypeFor[Task]()
	for i := range tt.NumField() {
		f := tt.Field(i)
		tk := &Task{TaskID: "t-1", Model: "fast", Content: "c"}
		v := reflect.ValueOf(tk).Elem().Field(i)
		switch f.Name {
		case "Send":
			st := reflect.TypeFor[SendRecord]()
			for j := range st.NumField() {
				s := &SendRecord{State: SendSent}
				set(reflect.ValueOf(s).Elem().Field(j))
				tk.Send = s
				check("send."+st.Field(j).Name, tk)
			}
			continue
		case "Attachments":
			tk.Attachments = []string{"ref.jpg", "说明.txt", "a: b"}
			check("attachments", tk)
			continue
		case "AttachmentsChecked":
			ct := reflect.TypeFor[Attachment]()
			for j := range ct.NumField() {
				a := Attachment{Name: "name", Path: "path", Type: "type", SHA256: "sum"}
				set(reflect.ValueOf(&a).Elem().Field(j))
				tk.AttachmentsChecked = []Attachment{a, {Name: "x.jpg", Path: "files/x.jpg", Type: "image/jpeg", Size: 3, SHA256: "abc"}}
				check("attachmentsChecked."+ct.Field(j).Name, tk)
			}
			continue
		case "Sampling":
			temp, n := 0.2, 50
			tk.Sampling = &Sampling{Temperature: &temp, MaxTokens: &n, Stop: []string{"END", "a: b"}, ReasoningEffort: "low"}
			b, err := tk.Encode()
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeTask(b)
			if err != nil || !reflect.DeepEqual(back.Sampling, tk.Sampling) {
				t.Errorf("sampling: read back %+v (%v), want %+v", back.Sampling, err, tk.Sampling)
			}
			continue
		case "Usage":
			for _, u := range testUsages {
				tk.Usage = u
				check(fmt.Sprintf("usage %+v", u), tk)
			}
			continue
		case "Attempts":
			at := reflect.TypeFor[AttemptRecord]()
			for j := range at.NumField() {
				a := AttemptRecord{N: 1}
				if at.Field(j).Name == "Usage" {
					for _, u := range testUsages {
						a.Usage = u
						tk.Attempts = []AttemptRecord{a, {N: 2, Outcome: AttemptSuccess, Usage: u}}
						check(fmt.Sprintf("attempts.usage %+v", u), tk)
					}
					continue
				}
				set(reflect.ValueOf(&a).Elem().Field(j))
				tk.Attempts = []AttemptRecord{a, {N: 2, Outcome: AttemptSuccess}}
				check("attempts."+at.Field(j).Name, tk)
			}
			continue
		case "Artifacts":
			at := reflect.TypeFor[Artifact]()
			for j := range at.NumField() {
				a := Artifact{Name: "01.png", Path: "../outputs/t-1/01.png", Type: "image/png", Size: 3, SHA256: "ab12"}
				set(reflect.ValueOf(&a).Elem().Field(j))
				tk.Artifacts = []Artifact{a, {Name: "02.csv", Path: "02.csv", Type: "text/plain"}}
				if b, err := tk.Encode(); err != nil || !strings.Contains(string(b), "artifacts:\n  - name: ") {
					t.Errorf("artifacts.%s: Encode wrote %s (%v)", at.Field(j).Name, b, err)
				} else if back, err := DecodeRecord(b); err != nil || !reflect.DeepEqual(back.Artifacts, tk.Artifacts) {
					t.Errorf("artifacts.%s: read back %+v (%v), want %+v", at.Field(j).Name, back.Artifacts, err, tk.Artifacts)
				}
			}
			continue
		case "Wrote":
			// Left to yaml.v3, as Artifacts: it must read back whole.
			tk.Wrote = []Written{{Path: "reports/final.md", SHA256: "0123"}, {Path: "reports/final-01.png", SHA256: "ab"}}
			if b, err := tk.Encode(); err != nil || !strings.Contains(string(b), "wrote:\n  - path: ") {
				t.Errorf("wrote: Encode wrote %s (%v)", b, err)
			} else if back, err := DecodeRecord(b); err != nil || !reflect.DeepEqual(back.Wrote, tk.Wrote) {
				t.Errorf("wrote: read back %+v (%v), want %+v", back.Wrote, err, tk.Wrote)
			}
			continue
		}
		set(v)
		check(f.Name, tk)
	}
}

// FuzzTask_EncodeFast: whatever the text, appendTask writes yaml.v3's bytes
// or leaves the task to it.
func FuzzTask_EncodeFast(f *testing.F) {
	for _, s := range []string{"Write copy.", "a: b", "x\ny\n", "写文案", "true", "#x", "a #b", "it's", " x", "x\n\n"} {
		f.Add(s, s, s, 1)
	}
	f.Fuzz(func(t *testing.T, content, result, other string, n int) {
		tk := &Task{TaskID: "t-" + other, Model: other, Content: content, Result: result, Reasoning: content, Error: other, Attempt: n,
			Send:               &SendRecord{State: SendSent, Attempt: n, Conversation: other},
			Attempts:           []AttemptRecord{{N: n, Owner: other, DeliveryReason: content, Modes: other, Attached: other}},
			Attachments:        []string{other, content},
			AttachmentsChecked: []Attachment{{Name: other, Path: content, Type: other, Size: n, SHA256: other}}}
		if strings.Count(other, "x") > 1 {
			tk.Send, tk.Attempts = nil, nil
		}
		fast, ok, want := fastAndYAML(t, tk)
		if ok && !bytes.Equal(fast, want) {
			t.Fatalf("appendTask wrote\n%q\nyaml.v3 writes\n%q", fast, want)
		}
	})
}

// BenchmarkTask_Encode: a finished task's record, by appendTask (Encode)
// and by yaml.v3 (the baseline), in the same run.
func BenchmarkTask_Encode(b *testing.B) {
	at := time.Date(2026, 12, 3, 4, 5, 6, 789_000_000, time.UTC)
	tk := &Task{TaskID: "launch-0001", ModelKind: KindAPI, Model: "fast", Content: "Write launch copy for the spring sale.\nThree short paragraphs.\n",
		State: StateSuccess, Attempt: 1, SubmittedAt: at, StartedAt: at, HeartbeatAt: at, FinishedAt: at, Owner: "host-a:4242",
		Attempts: []AttemptRecord{{N: 1, ClaimedAt: at, StartedAt: at, EndedAt: at, Outcome: AttemptSuccess, Owner: "host-a:4242"}},
		Result:   "# Spring sale\n\nEverything is ten percent off.\n"}
	b.Run("appendTask", func(b *testing.B) {
		for b.Loop() {
			if _, err := tk.Encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("yaml.v3", func(b *testing.B) {
		for b.Loop() {
			if _, err := tk.rounded().encodeYAML(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

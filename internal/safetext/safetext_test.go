package safetext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "launch-001", "launch-001"},
		{"cjk and emoji kept", "春季广告 🌷", "春季广告 🌷"},
		{"esc csi", "\x1b[2Jgone", `\x1b[2Jgone`},
		{"osc title", "\x1b]0;pwned\a", `\x1b]0;pwned\x07`},
		{"newline and tab", "a\nb\tc\r", `a\x0ab\x09c\x0d`},
		{"nul and del", "a\x00b\x7f", `a\x00b\x7f`},
		{"c1 csi as utf-8", "a\u009b2Jb", `a\x9b2Jb`},
		{"raw 0x9b byte", "a\x9b2J", `a\x9b2J`},
		{"bidi override", "txt\u202egnp.exe", `txt\u202egnp.exe`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"lrm kept", "a\u200eb", "a\u200eb"},
		{"backslash kept", `a\x1b`, `a\x1b`},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.want {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"line one\nline\ttwo\n", "line one\nline\ttwo\n"},
		{"a\r\nb", `a\x0d` + "\nb"},
		{"\x1b[31mred\x1b[0m\n", `\x1b[31mred\x1b[0m` + "\n"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCSVCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"},
		{"+1+1", "'+1+1"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", `\x0d=1`}, // the CR is escaped first, so nothing leads
		{"a=1", "a=1"},
		{"'quoted", "'quoted"},
		{"", ""},
		{"春=1", "春=1"},
		{"\x1b[2J=1", `\x1b[2J=1`},
		{"multi\nline", "multi\nline"},
	} {
		if got := CSVCell(tc.in); got != tc.want {
			t.Errorf("CSVCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestJSON(t *testing.T) {
	in := map[string]string{"batch": "a\u009b2J\u202e\x7f\x1b春🌷"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := JSON(raw)
	for _, r := range string(got) {
		if unsafe(r) {
			t.Errorf("JSON left %U raw in %s", r, got)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back["batch"] != in["batch"] {
		t.Errorf("round trip: %q, want %q", back["batch"], in["batch"])
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Errorf("clean JSON was copied")
	}
}

func TestStrings(t *testing.T) {
	type inner struct {
		Name string
		Kind namedString
	}
	type view struct {
		Batch   string
		Ptr     *string
		List    []inner
		Arr     [1]inner
		Any     any
		private string
		N       int
	}
	s := "p\x1b"
	v := view{Batch: "b\x1b[2J", Ptr: &s, List: []inner{{Name: "\u202ex", Kind: "k\x07"}}, Arr: [1]inner{{Name: "\x9b"}},
		Any: &inner{Name: "i\x00"}, private: "\x1b", N: 3}
	Strings(&v)
	if v.Batch != `b\x1b[2J` || *v.Ptr != `p\x1b` || v.List[0].Name != `\u202ex` || v.List[0].Kind != `k\x07` ||
		v.Arr[0].Name != `\x9b` || v.Any.(*inner).Name != `i\x00` {
		t.Errorf("not every string cleaned: %+v %q %+v", v, *v.Ptr, v.Any)
	}
	if v.private != "\x1b" {
		t.Errorf("unexported field changed")
	}
	Strings(nil)    // no panic
	Strings(view{}) // not addressable: nothing to set, no panic
	Strings((*view)(nil))
}

type namedString string

// FuzzLine holds Line and Text to their contract: nothing unsafe and no
// invalid UTF-8 comes out, and a second pass changes nothing.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\u009b", "\xff\xfe", "\u202e", "a\nb\tc\r", `\x1b`, "春🌷"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, multi := range []bool{false, true} {
			out := escape(s, multi)
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
			}
			for _, r := range out {
				if unsafe(r) && !(multi && (r == '\n' || r == '\t')) {
					t.Fatalf("%U left in %q (from %q)", r, out, s)
				}
			}
			if again := escape(out, multi); again != out {
				t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
			}
			if c := CSVCell(s); c != "" && strings.IndexByte(formulaLead, c[0]) >= 0 {
				t.Fatalf("CSVCell(%q) = %q starts a formula", s, c)
			}
		}
	})
}

func TestShellArg(t *testing.T) {
	for in, want := range map[string]string{
		"render-02":    "render-02",
		"x;$(id)":      `'x;$(id)'`,
		"a b":          `'a b'`,
		"it's":         `'it'\''s'`,
		"":             `''`,
		"-rf":          `'-rf'`,
		"h`reboot`":    "'h`reboot`'",
		"host.example": "host.example",
	} {
		if got := ShellArg(in); got != want {
			t.Errorf("ShellArg(%q) = %s, want %s", in, got, want)
		}
	}
}

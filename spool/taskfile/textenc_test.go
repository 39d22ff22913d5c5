package taskfile

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var b bytes.Buffer
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b.Write([]byte{byte(u >> 8), byte(u)})
		} else {
			b.Write([]byte{byte(u), byte(u >> 8)})
		}
	}
	return b.Bytes()
}

const notepadTask = "taskId: 春季广告\r\nmodel: fast\r\ncontent: \"郁金香 🌷 tulip\"\r\n"

func TestDecodeTask_Encodings(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"UTF-8", []byte(notepadTask), ""},
		{"UTF-8 with BOM", append([]byte{0xEF, 0xBB, 0xBF}, notepadTask...), ""},
		{"UTF-16 LE with BOM (Notepad's Unicode)", utf16Bytes(notepadTask, false, true), ""},
		{"UTF-16 BE with BOM", utf16Bytes(notepadTask, true, true), ""},
		{"UTF-16 LE without BOM", utf16Bytes("model: fast\ncontent: hello\n", false, false), "UTF-16 LE without a byte-order mark"},
		{"UTF-16 BE without BOM", utf16Bytes("model: fast\ncontent: hello\n", true, false), "UTF-16 BE without a byte-order mark"},
		{"UTF-16 cut short", utf16Bytes(notepadTask, false, true)[:11], "odd number of bytes"},
		{"UTF-16 unpaired surrogate", append(utf16Bytes("model: m\n", false, true), 0x3D, 0xD8, 'a', 0), "unpaired surrogate"},
		{"UTF-32 LE", []byte{0xFF, 0xFE, 0, 0, 'm', 0, 0, 0}, "UTF-32"},
		// 春季广告 in GBK.
		{"GBK", []byte("model: fast\ncontent: \xb4\xba\xbc\xbe\xb9\xe3\xb8\xe6\n"), `GBK/GB18030 (Chinese Windows "ANSI")`},
		// こんにちは in Shift_JIS.
		{"Shift_JIS", []byte("model: fast\ncontent: \x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd\n"), "Shift_JIS"},
		{"Windows-1252", []byte("model: fast\ncontent: caf\xe9 cr\xe8me br\xfbl\xe9e\n"), "Windows-1252"},
		{"binary", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x02\x00\x3e\x00\x01\x00\x00\x00\x10\x10\x40\x00\x00\x00\x00\x00"), "binary data"},
		{"binary, valid UTF-8", []byte("model: m\ncontent: a\x00b\n"), "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task, err := DecodeTask(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.ContainsAny(err.Error(), "\n\r") {
					t.Errorf("not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if task.TaskID != "春季广告" || task.Content != "郁金香 🌷 tulip" {
				t.Fatalf("decoded %+v", task)
			}
			// Rewritten as UTF-8, emoji as itself.
			enc, err := task.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(enc, []byte("郁金香 🌷 tulip")) || bytes.Contains(enc, []byte(`\U`)) {
				t.Errorf("encoded:\n%s", enc)
			}
		})
	}
}

// Characters outside the BMP are written as themselves, in every style the
// encoder picks, and read back the same.
func TestTask_EncodeNonBMP(t *testing.T) {
	for _, tk := range []Task{
		{TaskID: "a", Model: "m", Content: "🌷", Batch: "🌷 spring"},
		{TaskID: "b", Model: "m", Content: "tulip 🌷\nline two 𠀋 (U+2000B)\n", Result: "𝄞 music"},
		{TaskID: "c", Model: "m", Content: "🌷 with a private-use \ue000 and \uf8ff\ttab ", Error: "x: 🌷"},
		{TaskID: "d", Model: "m", Content: `quote " and back\slash \U0001F337 literally 🌷`},
		{TaskID: "e", Model: "m", Content: "- 🌷\n: 🌷\n#🌷", Prompt: "'🌷'"},
	} {
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(`\U0001F337`)) && !strings.Contains(tk.Content, `\U0001F337`) {
			t.Errorf("%s: emoji escaped:\n%s", tk.TaskID, data)
		}
		back, err := DecodeTask(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tk.TaskID, err, data)
		}
		if back.Content != tk.Content || back.Batch != tk.Batch || back.Result != tk.Result || back.Prompt != tk.Prompt || back.Error != tk.Error {
			t.Errorf("%s: round trip changed the text:\n%s", tk.TaskID, data)
		}
	}
}

package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	const u = "https://chat.example/files/s3cr3t/a.png?sig=1&exp=2"
	links := map[string]string{u: "../outputs/t/01.png", "/files/b.csv": "../outputs/t/02.csv"}
	tests := []struct{ name, in, want string }{
		{"image", "![chart](" + u + ")", "![chart](../outputs/t/01.png)"},
		{"image with title", "![chart](" + u + ` "Chart")`, `![chart](../outputs/t/01.png "Chart")`},
		{"link", "see [figures](/files/b.csv).", "see [figures](../outputs/t/02.csv)."},
		{"autolink", "<" + u + ">", "<../outputs/t/01.png>"},
		{"bare at the end of a sentence", "here: " + u + ".", "here: ../outputs/t/01.png."},
		{"html src", `<img src="` + strings.ReplaceAll(u, "&", "&amp;") + `">`, `<img src="../outputs/t/01.png">`},
		{"twice", "[a](/files/b.csv) and [b](/files/b.csv)", "[a](../outputs/t/02.csv) and [b](../outputs/t/02.csv)"},
		{"longer path left alone", "[x](/files/b.csv.bak)", "[x](/files/b.csv.bak)"},
		{"another query left alone", "[x](/files/b.csv?v=2)", "[x](/files/b.csv?v=2)"},
		{"same path on another host left alone", "[x](https://other.example/files/b.csv)", "[x](https://other.example/files/b.csv)"},
		{"no reference", "plain text", "plain text"},
		{"table cell", "| a | " + u + " |", "| a | ../outputs/t/01.png |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Rewrite(tt.in, links); got != tt.want {
				t.Errorf("Rewrite(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func pngBytes(t *testing.T, w int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, w))
	img.Set(0, 0, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		hint     string
		typ, ext string
	}{
		{"png named jpg", pngBytes(t, 2), "x.jpg", "image/png", ".png"},
		{"jpeg", []byte("\xff\xd8\xff\xe0rest"), "", "image/jpeg", ".jpg"},
		{"pdf", []byte("%PDF-1.7\n"), "report", "application/pdf", ".pdf"},
		{"csv text", []byte("a,b\n1,2\n"), "/files/fig.csv?x=1", "text/plain", ".csv"},
		{"text with an executable name", []byte("hello"), "run.exe", "text/plain", ".txt"},
		{"html", []byte("<!doctype html><p>x"), "page.png", "text/html", ".html"},
		{"docx", []byte("PK\x03\x04rest"), "report.docx", zipKinds[".docx"], ".docx"},
		{"zip", []byte("PK\x03\x04rest"), "", "application/zip", ".zip"},
		{"unknown binary with a name", []byte{0, 1, 2, 3}, "model.glb", "application/octet-stream", ".glb"},
		{"unknown binary with a bad name", []byte{0, 1, 2, 3}, "a.Weird-Ext!", "application/octet-stream", ".bin"},
	}
	for _, tt := range tests {
		typ, ext := Sniff(tt.data, tt.hint)
		if typ != tt.typ || ext != tt.ext {
			t.Errorf("%s: Sniff = %q %q, want %q %q", tt.name, typ, ext, tt.typ, tt.ext)
		}
	}
}

func TestName(t *testing.T) {
	for _, tt := range []struct {
		n         int
		ext, stem string
		want      string
	}{{1, ".png", "", "01.png"}, {12, ".pdf", "", "12.pdf"}, {2, ".csv", "cover", "cover-02.csv"}, {100, ".bin", "", "100.bin"}} {
		if got := Name(tt.n, tt.ext, tt.stem); got != tt.want {
			t.Errorf("Name(%d, %q, %q) = %q, want %q", tt.n, tt.ext, tt.stem, got, tt.want)
		}
	}
}

func TestKeep(t *testing.T) {
	img := pngBytes(t, 3)
	saved := map[string][]byte{}
	save := func(name string, data []byte) (string, error) {
		saved[name] = data
		return "../outputs/t/" + name, nil
	}
	text := "![one](/i/1) and a file [data](/f/x.csv)"
	files := []File{
		{Refs: []string{"/i/1", "http://h/i/1"}, Title: "one", Image: true, Data: img},
		{Refs: []string{"/f/x.csv"}, Hint: "x.csv", Title: "data", Data: []byte("a,b\n")},
		{Refs: []string{"/i/unmentioned"}, Title: "two", Image: true, Data: img},
	}
	got, list, err := Keep(text, files, Limits{}, "", save)
	if err != nil {
		t.Fatal(err)
	}
	want := "![one](../outputs/t/01.png) and a file [data](../outputs/t/02.csv)\n\n![two](../outputs/t/03.png)"
	if got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	sum := sha256.Sum256(img)
	if len(list) != 3 || list[0].Name != "01.png" || list[0].Type != "image/png" || list[0].SHA256 != hex.EncodeToString(sum[:]) || list[0].Size != int64(len(img)) || list[1].Name != "02.csv" || list[1].Path != "../outputs/t/02.csv" {
		t.Errorf("list %+v", list)
	}
	if !bytes.Equal(saved["03.png"], img) {
		t.Error("03.png not saved as given")
	}
}

func TestKeep_Limits(t *testing.T) {
	save := func(name string, data []byte) (string, error) { return name, nil }
	big := File{Refs: []string{"/a"}, Hint: "a.bin", Data: make([]byte, 11)}
	if _, _, err := Keep("x", []File{big}, Limits{MaxFile: 10, MaxTask: 100}, "", save); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "maxFileSize 10") {
		t.Errorf("one file over maxFileSize: %v", err)
	}
	f := File{Data: make([]byte, 6)}
	if _, _, err := Keep("x", []File{f, f}, Limits{MaxFile: 10, MaxTask: 11}, "", save); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "maxTaskSize 11") {
		t.Errorf("two files over maxTaskSize: %v", err)
	}
	if _, list, err := Keep("x", []File{f, f}, Limits{MaxFile: 10, MaxTask: 12}, "", save); err != nil || len(list) != 2 {
		t.Errorf("at the limits: %v %v", list, err)
	}
}

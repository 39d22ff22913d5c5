package chatstand

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
)

// A message with `[[media]]` is answered, on a page with a Markdown
// renderer, with two generated PNG images and a link to a generated CSV
// file, as the chat sites that draw pictures answer. Their addresses are
// /files/KEY/NAME, and they are served only to a signed-in session: a
// request without the session cookie gets 403, so a test that finds the
// same bytes in spoolgate's result proves they came through the page's
// own session. The bytes are deterministic (MediaFiles).

// MediaFile is one file a `[[media]]` answer links.
type MediaFile struct {
	Path  string // /files/KEY/NAME, as the answer's Markdown writes it
	Name  string
	Title string
	Type  string
	Data  []byte
}

// mediaKey is the folder of content's files: a hash of its text.
func mediaKey(content string) string {
	sum := sha256.Sum256([]byte(parseDirectives(content).cleanedText))
	return hex.EncodeToString(sum[:8])
}

// MediaFiles are the files the answer to content links, in order: two
// PNG images and one CSV file; none without `[[media]]`.
func MediaFiles(content string) []MediaFile {
	if !parseDirectives(content).media {
		return nil
	}
	key := mediaKey(content)
	var out []MediaFile
	for i := 1; i <= 2; i++ {
		name := fmt.Sprintf("chart-%d.png", i)
		out = append(out, MediaFile{Path: "/files/" + key + "/" + name, Name: name, Title: fmt.Sprintf("Chart %d", i), Type: "image/png", Data: chartPNG(key, i)})
	}
	csv := fmt.Sprintf("quarter,revenue\nQ1,%d\nQ2,%d\n", 100+int(key[0]), 200+int(key[1]))
	out = append(out, MediaFile{Path: "/files/" + key + "/figures.csv", Name: "figures.csv", Title: "figures.csv", Type: "text/csv", Data: []byte(csv)})
	return out
}

// mediaMarkdown is the part of the answer that links content's files.
func mediaMarkdown(content string) string {
	fs := MediaFiles(content)
	if len(fs) == 0 {
		return ""
	}
	return fmt.Sprintf("\n\nHere are the charts.\n\n![%s](%s)\n\n![%s](%s)\n\nThe figures: [%s](%s)", fs[0].Title, fs[0].Path, fs[1].Title, fs[1].Path, fs[2].Title, fs[2].Path)
}

// chartPNG draws a small bar chart, the same bytes for the same key and n.
func chartPNG(key string, n int) []byte {
	const w, h = 96, 64
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	bg := color.NRGBA{R: 250, G: 250, B: 245, A: 255}
	for y := range h {
		for x := range w {
			img.Set(x, y, bg)
		}
	}
	for b := range 6 {
		v := int(key[(b+n)%len(key)])
		top := h - 8 - (v*7+b*13+n*5)%(h-16)
		c := color.NRGBA{R: uint8(40 * n), G: uint8(60 + 25*b), B: uint8(v), A: 255}
		for y := top; y < h-4; y++ {
			for x := 6 + b*15; x < 6+b*15+10; x++ {
				img.Set(x, y, c)
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// handleMedia serves /files/KEY/NAME to a signed-in session only.
func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.user(r); !ok {
		s.mu.Lock()
		s.media.refused++
		s.mu.Unlock()
		http.Error(w, "forbidden: sign in", http.StatusForbidden)
		return
	}
	key, name := r.PathValue("key"), r.PathValue("name")
	for i := 1; i <= 2; i++ {
		if name == fmt.Sprintf("chart-%d.png", i) {
			s.serveMedia(w, "image/png", chartPNG(key, i))
			return
		}
	}
	if name == "figures.csv" && len(key) >= 2 {
		csv := fmt.Sprintf("quarter,revenue\nQ1,%d\nQ2,%d\n", 100+int(key[0]), 200+int(key[1]))
		w.Header().Set("Content-Disposition", `attachment; filename="figures.csv"`)
		s.serveMedia(w, "text/csv", []byte(csv))
		return
	}
	http.NotFound(w, r)
}

func (s *Server) serveMedia(w http.ResponseWriter, typ string, data []byte) {
	s.mu.Lock()
	s.media.served++
	s.mu.Unlock()
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "private, no-store")
	_, _ = w.Write(data)
}

// MediaServed is how many generated files the stand-in served to a
// signed-in session, and how many requests without one it refused.
func (s *Server) MediaServed() (served, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.media.served, s.media.refused
}

// mediaCounts are the generated files served to a signed-in session and
// the requests for them refused without one.
type mediaCounts struct{ served, refused int }

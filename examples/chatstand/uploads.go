package chatstand

import (
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"net/http"
)

// A chat page takes files as the chat sites do: the composer is a drop
// zone (Dropzone, a drag-and-drop component from npm: examples/uploader)
// whose paperclip button opens Dropzone's own hidden <input type=file>,
// and the form also holds a plain <input type=file>. Each file chosen in
// either is uploaded at once to /api/upload and shows as a chip with its
// name; the message carries the uploads' ids. The server records every
// file it receives with its SHA-256, so a test can compare bytes.

// uploaderJS is the drop-zone component: Dropzone's npm release, bundled
// by examples/uploader/build.sh.
//
//go:embed uploader/dropzone.js
var uploaderJS embed.FS

// handleUploader serves the drop-zone bundle.
func (s *Server) handleUploader(w http.ResponseWriter, r *http.Request) {
	serveBundle(w, r, uploaderJS, "uploader/dropzone.js")
}

// Upload is one file the stand-in received.
type Upload struct {
	ID     string
	User   string
	Name   string
	Size   int
	SHA256 string
}

// maxUpload bounds one uploaded file.
const maxUpload = 32 << 20

// handleUpload is POST /api/upload: a multipart form with one or more
// "file" parts; it answers [{"id","name","size"}] in order.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	user, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad upload: " + err.Error()})
		return
	}
	type out struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Size int    `json:"size"`
	}
	var got []out
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad upload: " + err.Error()})
			return
		}
		if p.FormName() != "file" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(p, maxUpload+1))
		if err != nil || len(data) > maxUpload {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": "file too large"})
			return
		}
		sum := sha256.Sum256(data)
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		u := Upload{ID: hex.EncodeToString(b), User: user, Name: p.FileName(), Size: len(data), SHA256: hex.EncodeToString(sum[:])}
		s.mu.Lock()
		s.uploads = append(s.uploads, u)
		s.mu.Unlock()
		got = append(got, out{ID: u.ID, Name: u.Name, Size: u.Size})
	}
	writeJSON(w, http.StatusOK, got)
}

// Uploads lists every file received, in arrival order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Upload(nil), s.uploads...)
}

// filesOf returns the SHA-256 of each upload id a message names ("?" for
// an id never uploaded). s.mu is held.
func (s *Server) filesOf(ids []string) []string {
	var out []string
	for _, id := range ids {
		sum := "?"
		for _, u := range s.uploads {
			if u.ID == id {
				sum = u.SHA256
			}
		}
		out = append(out, sum)
	}
	return out
}

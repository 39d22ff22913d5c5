package apistand

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
)

// The images endpoint (OpenAI's POST /v1/images/generations): every
// prompt gets two PNG pictures, the first inline as b64_json, the second
// as a url on this server (/v1/files/KEY/2.png), as vendors answer with
// either. The bytes depend on the prompt only: Pictures.

// Pictures are the two PNGs the images endpoint answers prompt with.
func Pictures(prompt string) [][]byte {
	key := pictureKey(prompt)
	return [][]byte{picture(key, 1), picture(key, 2)}
}

func pictureKey(prompt string) string {
	sum := sha256.Sum256([]byte(prompt))
	return strings.ToLower(base64.RawURLEncoding.EncodeToString(sum[:9]))
}

// picture draws a small gradient, the same bytes for the same key and n.
func picture(key string, n int) []byte {
	const w, h = 48, 32
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{R: uint8(x * 5), G: uint8(int(key[n%len(key)]) + y*3), B: uint8(60 * n), A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func (s *Server) handleImages(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || req.Prompt == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "a JSON body with a prompt is required")
		return
	}
	pics := Pictures(req.Prompt)
	base := "http://" + r.Host + "/v1/files/" + pictureKey(req.Prompt) + "/2.png"
	writeJSON(w, http.StatusOK, map[string]any{
		"created": 1,
		"data": []map[string]string{
			{"b64_json": base64.StdEncoding.EncodeToString(pics[0]), "revised_prompt": req.Prompt},
			{"url": base},
		},
	})
}

// handleFile serves a url picture.
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("name") != "2.png" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_, _ = w.Write(picture(r.PathValue("key"), 2))
}

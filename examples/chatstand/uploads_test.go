package chatstand

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"
)

// /api/upload takes a signed-in multipart upload, answers each file's id
// and records its SHA-256; a message naming the id carries that SHA-256.
func TestServer_Upload(t *testing.T) {
	s, err := Start(Options{Scale: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tok := s.Login("demo")
	post := func(path, ctype string, body []byte) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL()+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: tok})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	data := []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "说明.jpg")
	_, _ = fw.Write(data)
	_ = mw.Close()
	resp := post("api/upload", mw.FormDataContentType(), buf.Bytes())
	var got []struct{ ID, Name string }
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || len(got) != 1 || got[0].Name != "说明.jpg" {
		t.Fatalf("upload answer %+v, %v", got, err)
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	if ups := s.Uploads(); len(ups) != 1 || ups[0].SHA256 != want || ups[0].User != "demo" || ups[0].Size != len(data) {
		t.Fatalf("Uploads %+v", ups)
	}
	body, _ := json.Marshal(map[string]any{"content": "with a file", "files": []string{got[0].ID, "nope"}})
	resp = post("api/chat", "application/json", body)
	resp.Body.Close()
	if m := s.Received(); len(m) != 1 || len(m[0].Files) != 2 || m[0].Files[0] != want || m[0].Files[1] != "?" {
		t.Fatalf("Received %+v", m)
	}
}

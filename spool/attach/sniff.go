package attach

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/spool/config"
)

// The MIME types of the Office formats, which the bytes alone do not tell
// apart (OOXML is a zip, the older formats OLE2 compound files): the
// extension says which, once the bytes say it is one of them.
var officeTypes = map[string]string{
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".doc":  "application/msword",
	".xls":  "application/vnd.ms-excel",
	".ppt":  "application/vnd.ms-powerpoint",
}

var ole2 = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}

// Sniff returns the MIME type of a file named name holding data, from its
// bytes (net/http.DetectContentType), with the extension deciding only
// among the Office formats: a file's name never makes its bytes another
// kind.
func Sniff(name string, data []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	sniffed := http.DetectContentType(data)
	switch {
	case sniffed == "application/zip" && strings.HasSuffix(ext, "x") && officeTypes[ext] != "":
		return officeTypes[ext]
	case bytes.HasPrefix(data, ole2) && officeTypes[ext] != "" && !strings.HasSuffix(ext, "x"):
		return officeTypes[ext]
	case strings.HasPrefix(sniffed, "text/") && utf8.Valid(data):
		return "text/plain; charset=utf-8"
	}
	return sniffed
}

// KindOf is the kind (config.AttachImage...) of a MIME type Sniff returned,
// or "" for a type no model takes.
func KindOf(mime string) string {
	switch mime {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return config.AttachImage
	case "application/pdf":
		return config.AttachPDF
	case "text/plain; charset=utf-8":
		return config.AttachText
	}
	for _, t := range officeTypes {
		if mime == t {
			return config.AttachOffice
		}
	}
	return ""
}

// Package artifacts keeps the files a model generates with its answer
// (the images and downloads of a chat page's answer, an images endpoint's
// pictures): it sniffs each one, holds it to the size limits, names it
// NN.ext, has the caller save it, lists it for the task file and points
// the answer's Markdown at the saved file instead of the site's address.
// The issue spells these "artifacts"; the browser's failure artefacts
// (browser/artefacts.go: a failed attempt's screenshot and page) are
// another thing. It does no I/O of its own: the lane saves (durably,
// through internal/fsx), the executor fetches.
package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Default limits: a generated picture is a few MB; a task's whole set is
// bounded so a page that names a hundred files cannot fill the share.
const (
	DefaultMaxFile = 20 << 20
	DefaultMaxTask = 100 << 20
)

// ErrTooLarge is returned for a file over the per-file limit or a set
// over the per-task limit.
var ErrTooLarge = errors.New("generated file over the size limit")

// Limits bound what one task keeps.
type Limits struct {
	MaxFile int64 // each file; 0: DefaultMaxFile
	MaxTask int64 // all of one task's files; 0: DefaultMaxTask
}

func (l Limits) withDefaults() Limits {
	if l.MaxFile <= 0 {
		l.MaxFile = DefaultMaxFile
	}
	if l.MaxTask <= 0 {
		l.MaxTask = DefaultMaxTask
	}
	return l
}

// File is one generated file as the executor fetched it.
type File struct {
	// Refs are the addresses the answer names it by (the attribute as
	// written, the absolute URL): each is rewritten to the saved file.
	Refs []string
	// Hint is a name the site gave (a download's file name, the URL's
	// last part): its extension is kept when the bytes do not say more.
	Hint  string
	Title string // alt text or link text
	Image bool   // an <img> (or an images endpoint's picture)
	Data  []byte
	// Source is kept in the task file only when it is not session-bound.
	Source string
}

// SaveFunc saves one file by its name (NN.ext, or STEM-NN.ext) and
// returns its path relative to the result that will link it.
type SaveFunc func(name string, data []byte) (string, error)

// Keep saves files in order, rewrites text's references to them and
// returns the new text and the task file's list. A file with no
// reference in text is linked at its end (an image as an image), so
// every saved file is reachable from the result. stem is the output's
// name without extension ("" without output:).
func Keep(text string, files []File, lim Limits, stem string, save SaveFunc) (string, []taskfile.Artifact, error) {
	lim = lim.withDefaults()
	var total int64
	var out []taskfile.Artifact
	links := map[string]string{}
	var tail []string
	for i, f := range files {
		n := int64(len(f.Data))
		if n > lim.MaxFile {
			return text, nil, fmt.Errorf("%w: file %d (%s) is %d bytes, over artifacts.maxFileSize %d", ErrTooLarge, i+1, describe(f), n, lim.MaxFile)
		}
		if total+n > lim.MaxTask {
			return text, nil, fmt.Errorf("%w: files 1-%d are %d bytes, over artifacts.maxTaskSize %d", ErrTooLarge, i+1, total+n, lim.MaxTask)
		}
		total += n
		typ, ext := Sniff(f.Data, f.Hint)
		name := Name(i+1, ext, stem)
		rel, err := save(name, f.Data)
		if err != nil {
			return text, nil, fmt.Errorf("save generated file %s: %w", name, err)
		}
		sum := sha256.Sum256(f.Data)
		out = append(out, taskfile.Artifact{Name: name, Path: rel, Type: typ, Size: n, SHA256: hex.EncodeToString(sum[:]), Title: taskfile.OneLine(f.Title), Source: f.Source})
		mentioned := false
		for _, r := range f.Refs {
			if r == "" {
				continue
			}
			links[r] = rel
			mentioned = mentioned || strings.Contains(text, r)
		}
		if !mentioned {
			label := mdLabel(f.Title, name)
			if f.Image || strings.HasPrefix(typ, "image/") {
				tail = append(tail, "!["+label+"]("+rel+")")
			} else {
				tail = append(tail, "["+label+"]("+rel+")")
			}
		}
	}
	text = Rewrite(text, links)
	if len(tail) > 0 {
		text = strings.TrimRight(text, "\n") + "\n\n" + strings.Join(tail, "\n\n")
		text = strings.TrimLeft(text, "\n")
	}
	return text, out, nil
}

func describe(f File) string {
	if f.Hint != "" {
		return taskfile.Clip(f.Hint)
	}
	if f.Title != "" {
		return taskfile.Clip(f.Title)
	}
	return "unnamed"
}

var mdLabelBad = strings.NewReplacer("[", "(", "]", ")", "\n", " ")

func mdLabel(title, name string) string {
	if t := strings.TrimSpace(mdLabelBad.Replace(title)); t != "" {
		return t
	}
	return name
}

// Name is the saved file's name: 01.png, or STEM-01.png beside an output.
func Name(n int, ext, stem string) string {
	if stem != "" {
		return fmt.Sprintf("%s-%02d%s", stem, n, ext)
	}
	return fmt.Sprintf("%02d%s", n, ext)
}

// knownExt maps a sniffed type to its extension.
var knownExt = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/bmp": ".bmp",
	"image/x-icon": ".ico", "application/pdf": ".pdf", "audio/mpeg": ".mp3", "audio/wave": ".wav", "video/mp4": ".mp4",
	"video/webm": ".webm", "application/ogg": ".ogg", "font/woff": ".woff", "font/woff2": ".woff2",
}

// zipKinds are the formats that are zip files inside: their sniffed type
// is application/zip, and the site's name says which one.
var zipKinds = map[string]string{
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".zip":  "application/zip",
}

// textExt are the extensions a text file keeps from its name.
var textExt = map[string]bool{".txt": true, ".csv": true, ".md": true, ".json": true, ".tsv": true, ".xml": true, ".yaml": true, ".yml": true, ".log": true, ".svg": true}

var safeExt = regexp.MustCompile(`^\.[a-z0-9]{1,8}$`)

// Sniff returns the media type the bytes are (net/http.DetectContentType,
// never what the site claimed) and the extension to save them with: the
// type's own, or, where the bytes do not tell (zip-based Office files,
// text, unknown binary), the hint's extension when it is a plain one.
func Sniff(data []byte, hint string) (mediaType, ext string) {
	ct := http.DetectContentType(data)
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	hext := strings.ToLower(path.Ext(hintPath(hint)))
	if !safeExt.MatchString(hext) {
		hext = ""
	}
	if e, ok := knownExt[mt]; ok {
		return mt, e
	}
	switch {
	case mt == "application/zip":
		if t, ok := zipKinds[hext]; ok {
			return t, hext
		}
		return mt, ".zip"
	case strings.HasPrefix(mt, "text/"):
		if textExt[hext] {
			return mt, hext
		}
		if mt == "text/html" {
			return mt, ".html"
		}
		return mt, ".txt"
	}
	if hext != "" && !textExt[hext] && hext != ".html" && hext != ".htm" {
		return mt, hext
	}
	return mt, ".bin"
}

// hintPath drops a URL's query and fragment.
func hintPath(h string) string {
	if i := strings.IndexAny(h, "?#"); i >= 0 {
		h = h[:i]
	}
	return h
}

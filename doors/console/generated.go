package console

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The task page's generated files (the task file's artifacts:, issue 43;
// not the failure artefacts of shots): images shown inline, other files
// offered as downloads, from /task/LANE/ID/file/NAME. Only a NAME the task
// file lists is served, only from the task's own outputs folder (in its
// lane or its archive month) or its output: folder, never through a link,
// and, when the console has logins, only to a logged-in user.

// maxArtifactServed bounds a file served (artifacts.maxFileSize's
// ceiling is the config's; this is the console's own).
const maxArtifactServed = 1 << 30

type fileView struct {
	Name, Title, Type, Size, Href string
	Image                         bool
}

// inlineTypes are the types shown in the page; anything else (SVG
// included, which can carry script) is a download.
var inlineTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

func fileHref(lane taskfile.Kind, id, name string) string {
	return "/task/" + string(lane) + "/" + id + "/file/" + name
}

// generatedFiles are t's artifacts as the page lists them, and the
// result's Markdown with each saved file's path pointing at its route.
func generatedFiles(loc located, id string, t *taskfile.Task) ([]fileView, string) {
	links := map[string]string{}
	var out []fileView
	for _, a := range t.Artifacts {
		if !plainFileName(a.Name) {
			continue
		}
		href := fileHref(loc.lane, id, a.Name)
		links[a.Path] = href
		out = append(out, fileView{Name: a.Name, Title: safetext.Line(a.Title), Type: safetext.Line(a.Type), Size: strconv.FormatInt(a.Size, 10), Href: href, Image: inlineTypes[a.Type]})
	}
	return out, artifacts.Rewrite(t.Result, links)
}

// plainFileName: letters, digits, dot, dash and underscore, no leading
// dot: nothing a path could be made of.
func plainFileName(n string) bool {
	if n == "" || len(n) > 255 || n[0] == '.' {
		return false
	}
	return strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// artifactFile serves one generated file of a task.
func (h *httpServer) artifactFile(w http.ResponseWriter, r *http.Request) {
	lane, id, name := r.PathValue("lane"), r.PathValue("id"), r.PathValue("name")
	if h.auth != nil && h.auth.session(r) == nil {
		http.Error(w, "log in to download a task's files", http.StatusForbidden)
		return
	}
	L := spool.NewLayout(h.cfg.Spool)
	loc, ok := locateTask(L, lane, id)
	if !ok || !plainFileName(name) {
		http.NotFound(w, r)
		return
	}
	t, err := spool.ReadTaskFile(loc.path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	var a *taskfile.Artifact
	for i := range t.Artifacts {
		if t.Artifacts[i].Name == name {
			a = &t.Artifacts[i]
		}
	}
	if a == nil {
		http.NotFound(w, r)
		return
	}
	root, rel, ok := artifactPath(L, loc, t, *a)
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, fi, err := openBeneath(root, rel, maxArtifactServed)
	if err != nil {
		http.NotFound(w, r) // absent, out of its root, a link, a fifo, too large
		return
	}
	defer f.Close()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if inlineTypes[a.Type] {
		w.Header().Set("Content-Type", a.Type)
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", asciiName(name)))
	}
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	_, _ = io.Copy(w, io.LimitReader(f, fi.Size()))
}

// artifactPath is where a's file is, as a root and a path beneath it, or
// false when its path leaves the folders a task's files may be in:
// <lane or month>/outputs/ID/, or the folder of the task's output:.
func artifactPath(L spool.Layout, loc located, t *taskfile.Task, a taskfile.Artifact) (root, rel string, ok bool) {
	p := filepath.Join(L.ArtifactBase(filepath.Dir(loc.path), t), filepath.FromSlash(a.Path))
	if t.Output != "" {
		root = L.Output()
	} else {
		root = filepath.Join(filepath.Dir(filepath.Dir(loc.path)), taskfile.DirOutputs, t.TaskID)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", "", false
	}
	return root, rel, filepath.Base(p) == a.Name
}

// openBeneath opens root/rel for reading through os.Root, so no symlink
// on the way (a folder a colleague replaced with a link to /etc on the
// share) leads out of root, and the file itself must be a regular file
// of at most max bytes, not a link: the task file naming it is anybody's
// to edit, the bytes served must still be the spool's.
func openBeneath(root, rel string, max int64) (*os.File, os.FileInfo, error) {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil, nil, err
	}
	defer rt.Close()
	if fi, err := rt.Lstat(rel); err != nil || !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file beneath %s", rel, root)
	}
	f, err := rt.Open(rel)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || fi.Size() > max) {
		err = fmt.Errorf("%s: not a regular file of at most %d bytes", rel, max)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

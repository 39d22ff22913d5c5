package browser

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// keepArtefacts is how many attempts of a task keep their screenshot and
// page: the last three.
const keepArtefacts = 3

// artefactTimeout bounds taking the screenshot and the page's HTML of a
// failed attempt (its own context may be gone: a timeout).
const artefactTimeout = 10 * time.Second

// artefacts are the files saved for a failed attempt, relative to the
// spool (how an operator on any machine that sees the share finds them).
type artefacts struct{ png, html string }

func (a artefacts) String() string {
	switch {
	case a.png != "" && a.html != "":
		return "screenshot " + a.png + ", page " + a.html
	case a.png != "":
		return "screenshot " + a.png
	case a.html != "":
		return "page " + a.html
	}
	return ""
}

// saveArtefacts saves what the tab shows, as <lane>/logs/TASKID.N.png and
// TASKID.N.html (N = attempt; the HTML holds the page's open shadow roots
// as declarative <template shadowrootmode> elements), and removes those of
// attempts older than the last three. The files are written like task
// logs: no folder on the way followed through a symlink. Whatever cannot
// be saved is logged and left out.
func saveArtefacts(tab context.Context, st *spool.Store, id string, attempt int, log *slog.Logger) artefacts {
	ctx, cancel := context.WithTimeout(tab, artefactTimeout)
	defer cancel()
	dir := st.Layout.Lane(taskfile.KindWeb, taskfile.DirLogs)
	base := id + "." + strconv.Itoa(attempt)
	var a artefacts
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		log.Warn("driver: no screenshot of the failed attempt", "err", err)
	} else if err := st.WriteLogFile(taskfile.KindWeb, base+".png", png); err != nil {
		log.Warn("driver: cannot save the screenshot", "err", err)
	} else {
		a.png = filepath.ToSlash(filepath.Join(string(taskfile.KindWeb), taskfile.DirLogs, base+".png"))
	}
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {`+helpers+`
const doc = document.documentElement;
const html = typeof doc.getHTML === 'function' ? doc.getHTML({serializableShadowRoots: true, shadowRoots: openRoots()}) : doc.outerHTML;
return '<!doctype html>\n' + html;
})()`))
	if err != nil {
		log.Warn("driver: no HTML of the failed attempt", "err", err)
	} else if err := st.WriteLogFile(taskfile.KindWeb, base+".html", []byte(html)); err != nil {
		log.Warn("driver: cannot save the page's HTML", "err", err)
	} else {
		a.html = filepath.ToSlash(filepath.Join(string(taskfile.KindWeb), taskfile.DirLogs, base+".html"))
	}
	for n := attempt - keepArtefacts; n >= 1; n-- {
		old := filepath.Join(dir, id+"."+strconv.Itoa(n))
		_, e1 := os.Lstat(old + ".png")
		_, e2 := os.Lstat(old + ".html")
		if e1 != nil && e2 != nil {
			break // older ones went with it
		}
		_ = os.Remove(old + ".png")
		_ = os.Remove(old + ".html")
	}
	if s := a.String(); s != "" {
		log.Info(fmt.Sprintf("driver: saved the failed attempt's %s", s))
	}
	return a
}

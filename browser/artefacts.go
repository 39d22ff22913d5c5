package browser

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/lanes/attempt"
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
func saveArtefacts(tab context.Context, job *attempt.Job, id string, n int, log *slog.Logger) artefacts {
	ctx, cancel := context.WithTimeout(tab, artefactTimeout)
	defer cancel()
	base := id + "." + strconv.Itoa(n)
	var a artefacts
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		log.Warn("driver: no screenshot of the failed attempt", "err", err)
	} else if a.png, err = job.SaveLogFile(base+".png", png); err != nil {
		log.Warn("driver: cannot save the screenshot", "err", err)
	}
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {`+helpers+`
const doc = document.documentElement;
const html = typeof doc.getHTML === 'function' ? doc.getHTML({serializableShadowRoots: true, shadowRoots: openRoots()}) : doc.outerHTML;
return '<!doctype html>\n' + html;
})()`))
	if err != nil {
		log.Warn("driver: no HTML of the failed attempt", "err", err)
	} else if a.html, err = job.SaveLogFile(base+".html", []byte(html)); err != nil {
		log.Warn("driver: cannot save the page's HTML", "err", err)
	}
	for old := n - keepArtefacts; old >= 1; old-- {
		b := id + "." + strconv.Itoa(old)
		e1 := job.RemoveLogFile(b + ".png")
		e2 := job.RemoveLogFile(b + ".html")
		if errors.Is(e1, fs.ErrNotExist) && errors.Is(e2, fs.ErrNotExist) {
			break // older ones went with it
		}
	}
	if s := a.String(); s != "" {
		log.Info(fmt.Sprintf("driver: saved the failed attempt's %s", s))
	}
	return a
}

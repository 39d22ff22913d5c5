package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
)

// sinceChoices are the spans the status page offers beside its timeline.
var sinceChoices = []string{"1h", "2h", "6h", "24h", "7d"}

// maxSince bounds ?since=: a span longer than the spool's history only
// costs reading the whole archive.
const maxSince = 400 * 24 * time.Hour

// sinceParam reads ?since= of the status page: a duration ("30m", "2h",
// "1d"), "off" for no timeline, the default span when absent. ok is false
// for anything else.
func sinceParam(r *http.Request) (d time.Duration, show, ok bool) {
	v := strings.TrimSpace(r.URL.Query().Get("since"))
	switch v {
	case "":
		return 0, true, true // from the first attempt of the last DefaultSince
	case "off", "0":
		return 0, false, true
	}
	d, err := config.ParseDuration(v)
	if err != nil || d <= 0 || d > maxSince {
		return 0, false, false
	}
	return d, true, true
}

// sinceText is d as the page names it: 2h, 30m, 7d.
func sinceText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// snapshotTimeline takes the page's snapshot and, when show, draws the
// timeline of the same reading. The SVG is trusted HTML: timeline.Render
// escapes everything in it that came from the spool.
func (h *httpServer) snapshotTimeline(show bool, q status.TimelineQuery) (*status.Status, template.HTML, error) {
	if !show {
		st, err := h.snap.Snapshot(h.now())
		return st, "", err
	}
	st, c, err := h.snap.SnapshotTimeline(h.now(), q)
	if err != nil {
		return nil, "", err
	}
	var b bytes.Buffer
	if err := timeline.Render(&b, c); err != nil {
		return nil, "", err
	}
	return st, template.HTML(b.String()), nil //nolint:gosec // escaped by timeline.Render
}

// batchHref is the path of a batch's page.
func batchHref(name string) string { return "/batch/" + url.PathEscape(name) }

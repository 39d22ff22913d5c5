package timeline

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/safetext"
)

// The picture's geometry, in CSS pixels: wide enough for a day at
// minute resolution, rows tall enough to point at.
const (
	width     = 1120.0
	labelW    = 150.0 // the rows' names
	rightM    = 18.0
	topM      = 30.0 // the time axis
	groupH    = 22.0 // a lane's heading
	rowH      = 22.0
	barH      = 14.0
	legendH   = 40.0 // two lines at most
	narrowPx  = 2.0  // bars narrower than this, touching, are drawn as one ...
	groupPx   = 4.0  // ... up to this wide: one bad attempt colours a sliver, not a day
	maxTicks  = 12
	plotRight = width - rightM
)

// tickSteps are the axis's candidate intervals.
var tickSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour,
	12 * time.Hour, 24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour,
}

// Render writes c as one SVG element (no XML prolog: the status page
// inlines it; a file gets Document). Everything it shows that came from a
// task file is escaped, and control and bidi characters are made visible.
func Render(w io.Writer, c Chart) error { return render(w, c, false) }

func render(w io.Writer, c Chart, standalone bool) error {
	r := newRenderer(c)
	r.draw(standalone)
	_, err := io.WriteString(w, r.b.String())
	return err
}

// Document writes c as a stand-alone SVG file.
func Document(w io.Writer, c Chart) error {
	if _, err := io.WriteString(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"); err != nil {
		return err
	}
	if err := render(w, c, true); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

type renderer struct {
	c      Chart
	b      strings.Builder
	rowY   map[string]float64 // a row's top
	laneY  map[string][2]float64
	height float64
}

func newRenderer(c Chart) *renderer {
	if c.Loc == nil {
		c.Loc = time.UTC
	}
	if !c.To.After(c.From) {
		c.To = c.From.Add(time.Minute)
	}
	if c.Labels.Outcome == nil {
		c.Labels = LabelsEN
	}
	r := &renderer{c: c, rowY: map[string]float64{}, laneY: map[string][2]float64{}}
	y := topM
	lane := ""
	for _, row := range c.Rows {
		if row.Lane != lane || y == topM {
			lane = row.Lane
			y += groupH
		}
		r.rowY[row.Key] = y
		ly, ok := r.laneY[row.Lane]
		if !ok {
			ly[0] = y
		}
		ly[1] = y + rowH
		r.laneY[row.Lane] = ly
		y += rowH
	}
	if len(c.Rows) == 0 {
		y += 2 * rowH
	}
	r.height = y + 8 + legendH
	return r
}

// x is t's position on the plot, clamped to it.
func (r *renderer) x(t time.Time) float64 {
	span := r.c.To.Sub(r.c.From)
	f := float64(t.Sub(r.c.From)) / float64(span)
	return labelW + min(max(f, 0), 1)*(plotRight-labelW)
}

func (r *renderer) printf(format string, a ...any) { fmt.Fprintf(&r.b, format, a...) }

func esc(s string) string { return html.EscapeString(safetext.Line(s)) }

func (r *renderer) draw(standalone bool) {
	c := r.c
	if standalone {
		r.b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg"`) // inside a page, HTML knows it
	} else {
		r.b.WriteString(`<svg`)
	}
	r.printf(` class="timeline" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s" data-from="%s" data-to="%s" font-family="system-ui,-apple-system,Segoe UI,sans-serif" font-size="12">`,
		width, r.height, width, r.height, esc(c.Labels.Title), c.From.UTC().Format(time.RFC3339), c.To.UTC().Format(time.RFC3339))
	r.printf("\n<title>%s</title>\n", esc(c.Labels.Title))
	r.printf(`<defs><pattern id="sg-tl-pause" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#eceef1"/><rect width="3" height="8" fill="#cfd3d9"/></pattern>` +
		`<pattern id="sg-tl-hold" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="8" height="8" fill="#f1eaf9"/><rect width="3" height="8" fill="#d9c6ef"/></pattern></defs>` + "\n")
	r.printf(`<rect width="%.0f" height="%.0f" fill="#ffffff"/>`+"\n", width, r.height)
	r.rows()
	r.axis()
	r.spans()
	r.bars()
	r.nowLine()
	r.legend()
	r.b.WriteString("</svg>")
}

// rows draws the lanes' headings, the rows' names and their stripes.
func (r *renderer) rows() {
	lane := ""
	for i, row := range r.c.Rows {
		y := r.rowY[row.Key]
		if row.Lane != lane {
			lane = row.Lane
			name := r.c.Labels.Lanes[lane]
			if name == "" {
				name = lane
			}
			r.printf(`<text x="8" y="%.1f" font-weight="600" fill="#333">%s</text>`+"\n", y-7, esc(name))
		}
		fill := "#f7f8fa"
		if i%2 == 1 {
			fill = "#eef0f3"
		}
		r.printf(`<g class="tl-row" data-row="%s" data-lane="%s"><rect x="%.0f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/><text x="16" y="%.1f" fill="#444">%s</text></g>`+"\n",
			esc(row.Key), esc(row.Lane), labelW, y, plotRight-labelW, rowH, fill, y+rowH/2+4, esc(safetext.ClipRunes(row.Label, 20)))
	}
	if len(r.c.Rows) == 0 {
		r.printf(`<text x="%.1f" y="%.1f" fill="#777" text-anchor="middle" class="tl-empty">%s</text>`+"\n", (labelW+plotRight)/2, topM+rowH+4, esc(r.c.Labels.Empty))
	}
	if r.c.LeftOut > 0 && r.c.Labels.LeftOut != "" {
		r.printf(`<text x="%.1f" y="12" fill="#777" text-anchor="end" class="tl-leftout">%s</text>`+"\n", plotRight, esc(fmt.Sprintf(r.c.Labels.LeftOut, r.c.LeftOut)))
	}
}

// axis draws the time ticks over the whole plot.
func (r *renderer) axis() {
	span := r.c.To.Sub(r.c.From)
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= maxTicks {
			step = s
			break
		}
	}
	if span/step > maxTicks {
		// Longer than the steps reach (a planted record's years): whole
		// days, still at most maxTicks, whatever the span.
		step = (span/maxTicks + 24*time.Hour).Truncate(24 * time.Hour)
	}
	layout := "15:04"
	switch {
	case step < time.Minute:
		layout = "15:04:05"
	case span > 24*time.Hour:
		layout = "01-02 15:04"
	}
	bottom := r.height - legendH - 4
	// Ticks fall on whole steps of local time (a 2h step at even hours).
	_, off := r.c.From.In(r.c.Loc).Zone()
	offset := time.Duration(off) * time.Second
	first := r.c.From.Add(offset).Truncate(step).Add(-offset)
	if first.Before(r.c.From) {
		first = first.Add(step)
	}
	r.printf(`<g class="tl-axis" fill="#666">`)
	for t, n := first, 0; !t.After(r.c.To) && n <= maxTicks; t, n = t.Add(step), n+1 {
		x := r.x(t)
		r.printf(`<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.1f" stroke="#dde0e5"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`,
			x, topM-8, x, bottom, x, topM-12, t.In(r.c.Loc).Format(layout))
	}
	r.b.WriteString("</g>\n")
}

// waitFill is a chained task's wait: the pale blue of a task not yet
// running.
const waitFill = "#dbe7f7"

// spans shades the pauses (every row of their lane) and the holds (their
// account's row).
func (r *renderer) spans() {
	for _, s := range r.c.Spans {
		end := s.End
		if end.IsZero() {
			end = r.c.Now
		}
		if !end.After(r.c.From) || !s.Start.Before(r.c.To) {
			continue
		}
		x0, x1 := r.x(s.Start), r.x(end)
		var y0, y1 float64
		fill, label := "url(#sg-tl-pause)", r.c.Labels.Paused
		if s.Kind == Hold || s.Kind == Wait {
			fill, label = "url(#sg-tl-hold)", r.c.Labels.Held
			if s.Kind == Wait {
				fill, label = waitFill, r.c.Labels.Waited
			}
			y, ok := r.rowY[s.Row]
			if !ok {
				continue
			}
			y0, y1 = y+1, y+rowH-1
		} else {
			ly, ok := r.laneY[s.Lane]
			if !ok {
				continue
			}
			y0, y1 = ly[0], ly[1]
		}
		title := label + " · " + r.clock(s.Start) + "–" + r.clock(end)
		if s.Note != "" {
			title += " · " + s.Note
		}
		r.printf(`<rect class="tl-span" data-kind="%s" data-lane="%s" data-row="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n",
			s.Kind, esc(s.Lane), esc(s.Row), x0, y0, max(x1-x0, 1), y1-y0, fill, esc(title))
	}
}

// group is one drawn bar: one attempt, or several too narrow to tell
// apart (a day of short attempts: more than the picture has pixels). A
// group of several is drawn in the colour of its most severe outcome, so
// a retry or a failure among many successes still shows, and its title
// counts each outcome.
type group struct {
	x0, x1 float64
	first  *Bar
	last   *Bar
	lastW  float64 // the last attempt's own width
	n      int
	counts map[Outcome]int
	worst  Outcome
}

// severity orders the outcomes for a group's colour: the first wins.
var severity = []Outcome{Failed, Retried, Held, Canceled, Returned, Running, Success}

func (g *group) add(o Outcome) {
	if g.counts == nil {
		g.counts = map[Outcome]int{}
	}
	g.counts[o]++
	if g.worst == "" || slices.Index(severity, o) < slices.Index(severity, g.worst) {
		g.worst = o
	}
}

func (r *renderer) bars() {
	byRow := map[string][]*Bar{}
	for i := range r.c.Bars {
		b := &r.c.Bars[i]
		if _, ok := r.rowY[b.Row]; !ok {
			continue
		}
		end := b.End
		if end.IsZero() {
			end = r.c.Now
		}
		if end.Before(r.c.From) || b.Start.After(r.c.To) {
			continue
		}
		byRow[b.Row] = append(byRow[b.Row], b)
	}
	for _, row := range r.c.Rows {
		bars := byRow[row.Key]
		slices.SortStableFunc(bars, func(a, b *Bar) int {
			return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Attempt, b.Attempt))
		})
		var g *group
		for _, b := range bars {
			x0, x1 := r.x(b.Start), r.x(r.end(b))
			if g != nil && x1-x0 < narrowPx && g.lastW < narrowPx && x0-g.x1 < 1 && x1-g.x0 <= groupPx {
				g.x1, g.last, g.lastW, g.n = max(g.x1, x1), b, x1-x0, g.n+1
				g.add(b.Outcome)
				continue
			}
			if g != nil {
				r.bar(row, g)
			}
			g = &group{x0: x0, x1: x1, first: b, last: b, lastW: x1 - x0, n: 1}
			g.add(b.Outcome)
		}
		if g != nil {
			r.bar(row, g)
		}
	}
}

func (r *renderer) end(b *Bar) time.Time {
	if b.End.IsZero() {
		return r.c.Now
	}
	return b.End
}

func (r *renderer) bar(row Row, g *group) {
	L := r.c.Labels
	b := g.first
	y := r.rowY[row.Key] + (rowH-barH)/2
	x, w := g.x0, max(g.x1-g.x0, 1)
	if w >= 3 { // a hair of white between bars that touch
		x, w = x+0.5, w-1
	}
	var title string
	if g.n == 1 {
		parts := []string{b.Task, L.Attempt + " " + fmt.Sprint(b.Attempt)}
		if b.Batch != "" {
			parts = append(parts, L.Batch+" "+b.Batch)
		}
		parts = append(parts, L.Model+" "+b.Model)
		out := L.Outcome[b.Outcome]
		if b.Class != "" && b.Outcome != Success && b.Class != string(b.Outcome) { // "canceled (canceled)" says it once
			out += " (" + cmp.Or(L.Classes[b.Class], b.Class) + ")"
		}
		parts = append(parts, out, L.Took+" "+took(r.end(b).Sub(b.Start)), r.clock(b.Start)+"–"+r.clock(r.end(b)))
		title = strings.Join(parts, " · ")
	} else {
		var counts []string
		for _, o := range Outcomes {
			if n := g.counts[o]; n > 0 {
				counts = append(counts, fmt.Sprintf("%d %s", n, L.Outcome[o]))
			}
		}
		title = fmt.Sprintf(L.Attempts, g.n) + " · " + strings.Join(counts, ", ") + " · " + r.clock(b.Start) + "–" + r.clock(r.end(g.last))
	}
	rect := fmt.Sprintf(`<rect class="tl-bar" data-outcome="%s" data-lane="%s" data-row="%s" data-task="%s" data-attempt="%d" data-n="%d" data-start="%s" data-end="%s" x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="2" fill="%s"><title>%s</title></rect>`,
		g.worst, esc(b.Lane), esc(row.Key), esc(b.Task), b.Attempt, g.n, stamp(b.Start), stamp(r.end(g.last)), x, y, w, barH, Colour(g.worst), esc(title))
	if g.n == 1 && b.Href != "" {
		r.printf(`<a href="%s">%s</a>`+"\n", esc(b.Href), rect)
		return
	}
	r.b.WriteString(rect + "\n")
}

func (r *renderer) nowLine() {
	n := r.c.Now
	if n.IsZero() || n.Before(r.c.From) || n.After(r.c.To) {
		return
	}
	x := r.x(n)
	bottom := r.height - legendH - 4
	label := r.c.Labels.Now + " " + r.clock(n)
	tx, anchor := x-4, "end" // left of the line, unless that runs into the rows' names
	if x-4-textWidth(label) < labelW {
		tx, anchor = x+4, "start"
	}
	r.printf(`<g class="tl-now"><line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.1f" stroke="#e0245e" stroke-width="1.5" stroke-dasharray="4 3"/><text x="%.1f" y="%.0f" text-anchor="%s" fill="#e0245e" font-weight="600">%s</text></g>`+"\n",
		x, topM-6, x, bottom, tx, topM+9, anchor, esc(label))
}

func (r *renderer) legend() {
	y := r.height - legendH + 4
	x := 8.0
	r.printf(`<g class="tl-legend" fill="#444">`)
	item := func(fill, label string) {
		w := 19 + textWidth(label) + 14
		if x+w > plotRight {
			x, y = 8, y+16
		}
		r.printf(`<rect x="%.1f" y="%.1f" width="14" height="10" rx="2" fill="%s"/><text x="%.1f" y="%.1f">%s</text>`, x, y, fill, x+19, y+9, esc(label))
		x += w
	}
	for _, o := range Outcomes {
		item(Colour(o), r.c.Labels.Outcome[o])
	}
	item("url(#sg-tl-pause)", r.c.Labels.Paused)
	item("url(#sg-tl-hold)", r.c.Labels.Held)
	if slices.ContainsFunc(r.c.Spans, func(s Span) bool { return s.Kind == Wait }) {
		item(waitFill, r.c.Labels.Waited)
	}
	r.b.WriteString("</g>\n")
}

// clock is t on the chart's clock: seconds only for spans under a day.
func (r *renderer) clock(t time.Time) string {
	if r.c.To.Sub(r.c.From) > 24*time.Hour {
		return t.In(r.c.Loc).Format("01-02 15:04:05")
	}
	return t.In(r.c.Loc).Format("15:04:05")
}

// took is a duration as people read it: 850ms, 12s, 3m4s, 1h2m.
func took(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// textWidth estimates a label's width at 12px: wide characters (CJK)
// take twice a Latin one's room.
func textWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		if r >= 0x1100 {
			w += 12
		} else {
			w += 6.3
		}
	}
	return w
}

// stamp is t for a data attribute: RFC 3339 UTC, to the millisecond, so
// a reader can match a bar to the attempt record it stands for.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

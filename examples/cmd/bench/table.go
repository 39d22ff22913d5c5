package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

const (
	lanesName   = "spoolgate two lanes"
	apiOnlyName = "spoolgate, API-only batch"
)

// row is one strategy across the queue orders, in the order of -orders.
type row struct {
	name  string
	cells []*cell
}

func rows(cells []*cell) []row {
	var out []row
	idx := map[string]int{}
	for _, c := range cells {
		name := c.name()
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, row{name: name})
		}
		out[i].cells = append(out[i].cells, c)
	}
	return out
}

func (c *cell) name() string {
	if len(c.runs) == 0 {
		return c.st.key
	}
	return c.runs[0].Strategy
}

// bound is one distinct lower bound of the table.
type bound struct {
	label, formula string
	value          time.Duration
	rows           []string
}

// bounds labels each row's lower bound (B1, B2, ...) in table order, one
// label for each distinct formula.
func bounds(rs []row) (map[string]*bound, []*bound) {
	byRow := map[string]*bound{}
	byFormula := map[string]*bound{}
	var list []*bound
	for _, r := range rs {
		c := r.cells[0]
		if len(c.runs) == 0 {
			continue
		}
		f := c.runs[0].Limits.Formula(c.tasks)
		b, ok := byFormula[f]
		if !ok {
			b = &bound{label: fmt.Sprintf("B%d", len(list)+1), formula: f, value: bench.LowerBound(c.tasks, c.runs[0].Limits)}
			byFormula[f] = b
			list = append(list, b)
		}
		b.rows = append(b.rows, r.name)
		byRow[r.name] = b
	}
	return byRow, list
}

// Figures of one cell, each a Spread over its runs, in field time.
func makespan(r bench.Result) time.Duration { return r.Makespan }
func ratio(r bench.Result) float64          { return r.Ratio() }
func apiMean(r bench.Result) time.Duration  { return bench.Mean(r.APIWaits) }
func apiP95(r bench.Result) time.Duration   { return bench.Percentile(r.APIWaits, 95) }
func collisions(r bench.Result) int         { return r.WebCollisions }
func failed(r bench.Result) int             { return r.WebFailed + r.APIFailed }
func lost(r bench.Result) int               { return r.Lost }

// minutes and seconds format a Spread of measured durations in field time.
// Each shows its median and, from more than one run, (min–max).
func minutes(s bench.Spread[time.Duration], scale float64) string {
	m := func(d time.Duration) string { return fmt.Sprintf("%.1f", bench.Unscale(d, scale).Minutes()) }
	return spread(m(s.Median), m(s.Min), m(s.Max))
}

func seconds(s bench.Spread[time.Duration], scale float64) string {
	f := func(d time.Duration) string { return fmt.Sprintf("%.0f", bench.Unscale(d, scale).Seconds()) }
	return spread(f(s.Median), f(s.Min), f(s.Max))
}

func spread(med, lo, hi string) string {
	if lo == hi {
		return med
	}
	return fmt.Sprintf("%s (%s–%s)", med, lo, hi)
}

func count(s bench.Spread[int]) string {
	if s.Min == s.Max {
		return fmt.Sprint(s.Median)
	}
	return fmt.Sprintf("%d (%d–%d)", s.Median, s.Min, s.Max)
}

func orderTitle(order string, seed uint64) string {
	switch order {
	case bench.OrderWebFirst:
		return "web first (the field report's queue)"
	case bench.OrderMixed:
		return fmt.Sprintf("mixed (shuffled, seed %d)", seed)
	}
	return order
}

func writeTable(w io.Writer, o options, cells []*cell, machine string) {
	tasks := bench.FieldReport(o.seed)
	web, api := bench.Count(tasks, taskfile.KindWeb), bench.Count(tasks, taskfile.KindAPI)
	longest := func(k taskfile.Kind) time.Duration {
		var m time.Duration
		for _, t := range tasks {
			if t.Kind == k {
				m = max(m, t.Dur)
			}
		}
		return m
	}
	fmt.Fprintf(w, "workload: %d web (Σweb %s, longest %s) + %d API (Σapi %s, longest %s), seed %d\n",
		web, bench.Sum(tasks, taskfile.KindWeb), longest(taskfile.KindWeb), api, bench.Sum(tasks, taskfile.KindAPI), longest(taskfile.KindAPI), o.seed)
	fmt.Fprintf(w, "every strategy ran %d times in each order, the runs interleaved; each figure is the median of its runs, with (min–max) for makespan and API wait\n", o.repeat)
	fmt.Fprintf(w, "time scale %g: every time below is field-report time (measured ÷ %g); API quota %d at once; up to %d retries, backoff %s doubling\n",
		o.scale, o.scale, o.quota, o.maxRetries, o.backoff)
	fmt.Fprintln(w, "web calls go to the chat stand-in's HTTP form (POST /api/generate, one generation per session), not a browser; API calls through lanes/apimodel")
	if machine != "" {
		fmt.Fprintln(w, "machine:", machine)
	}
	fmt.Fprintln(w)

	rs := rows(cells)
	byRow, list := bounds(rs)
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"strategy", "bound"}
	for range o.orders {
		head = append(head, "|", "makespan, min", "× bound", "API wait mean, s", "API p95, s", "web collisions", "failed")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rs {
		line := []string{r.name, ""}
		if b := byRow[r.name]; b != nil {
			line[1] = b.label
		}
		for _, c := range r.cells {
			star := ""
			if bench.Over(c.runs, failed).Max+bench.Over(c.runs, lost).Max > 0 {
				star = "*"
			}
			line = append(line, "|",
				minutes(bench.Over(c.runs, makespan), o.scale),
				fmt.Sprintf("%.2f%s", bench.Over(c.runs, ratio).Median, star),
				seconds(bench.Over(c.runs, apiMean), o.scale),
				fmt.Sprintf("%.0f", bench.Unscale(bench.Over(c.runs, apiP95).Median, o.scale).Seconds()),
				fmt.Sprint(bench.Over(c.runs, collisions).Median),
				fmt.Sprint(bench.Over(c.runs, failed).Median))
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	_ = tw.Flush()
	// Each order's title above its columns, which start after a "|".
	header, _, _ := strings.Cut(buf.String(), "\n")
	title := []rune(strings.Repeat(" ", len([]rune(header))))
	i := 0
	for pos, r := range []rune(header) {
		if r == '|' && i < len(o.orders) {
			t := []rune("| " + orderTitle(o.orders[i], o.seed))
			for j := 0; j < len(t) && pos+j < len(title); j++ {
				title[pos+j] = t[j]
			}
			i++
		}
	}
	fmt.Fprintln(w, strings.TrimRight(string(title), " "))
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(l, " \n")+strings.Repeat("\n", strings.Count(l, "\n")))
	}
	fmt.Fprintln(w)
	writeBounds(w, o, list)
	fmt.Fprintln(w, "web collisions: web attempts the session refused (another generation was running); failed: tasks failed after all retries")
	fmt.Fprintln(w, "* some tasks failed: the makespan is short because their work was never done")
	lostAll := 0
	for _, c := range cells {
		for _, r := range c.runs {
			lostAll += r.Lost
		}
	}
	fmt.Fprintf(w, "lost (no final outcome), all runs of all strategies: %d\n", lostAll)
	writeCosts(w, o, rs)
	for _, r := range rs {
		c := r.cells[0]
		if len(c.runs) == 0 {
			continue
		}
		var webMax, apiMax, webSeen, apiSeen int
		var throttled, retries []int
		for _, c := range r.cells {
			for _, x := range c.runs {
				webMax, apiMax = max(webMax, x.MaxWebCalls), max(apiMax, x.MaxAPICalls)
				webSeen, apiSeen = max(webSeen, x.MaxWebAtOnce), max(apiSeen, x.MaxAPIAtOnce)
				throttled, retries = append(throttled, x.Throttled), append(retries, x.Retries)
			}
		}
		fmt.Fprintf(w, "  %-40s %s; calls open at once, web %d, API %d (the stand-ins had at most %d and %d); per run 429s %s, retries %s\n",
			r.name, c.runs[0].Note, webMax, apiMax, webSeen, apiSeen, count(bench.SpreadOf(throttled)), count(bench.SpreadOf(retries)))
	}
	writeVersus(w, o, rs)
	checks(w, o, rs)
}

// writeBounds prints each lower bound's formula once, and the bound of the
// vendors' limits alone.
func writeBounds(w io.Writer, o options, list []*bound) {
	fmt.Fprintln(w, "lower bounds: no scheduler within a row's limits can finish the batch sooner, in any order (field time)")
	fmt.Fprintf(w, "  Σweb/s: s web sessions, each one generation at a time; Σapi/k: k API calls at once, the least of the row's own API limit and the vendor's quota %d; Σall/w: w workers shared by both kinds\n", o.quota)
	for _, b := range list {
		fmt.Fprintf(w, "  %s = %s = %s: %s\n", b.label, b.formula, b.value.Round(time.Second), strings.Join(b.rows, "; "))
	}
	tasks := bench.FieldReport(o.seed)
	vendor := bench.Limits{Sessions: 1, API: o.quota}
	fmt.Fprintf(w, "  the vendors' limits alone (one session, quota %d): %s = %s; for the API-only batch %s = %s\n",
		o.quota, vendor.Formula(tasks), bench.LowerBound(tasks, vendor).Round(time.Second),
		vendor.Formula(apiOnly(tasks)), bench.LowerBound(apiOnly(tasks), vendor).Round(time.Second))
}

// writeCosts prints spoolgate's own per-task cost, over all runs.
func writeCosts(w io.Writer, o options, rs []row) {
	for _, r := range rs {
		var webGaps, apiGaps, first []time.Duration
		for _, c := range r.cells {
			for _, x := range c.runs {
				webGaps, apiGaps = append(webGaps, x.WebGaps...), append(apiGaps, x.APIGaps...)
				if x.WebAttempts > 0 {
					first = append(first, x.FirstWebStart)
				}
			}
		}
		if !strings.HasPrefix(r.name, "spoolgate") {
			continue
		}
		if len(webGaps) > 0 {
			fmt.Fprintf(w, "%s, per-task cost (real time, all runs): web model idle between calls %.1f ms mean, %.1f ms max over %d hand-overs; first web call %.1f ms after the first drop (median)\n",
				r.name, ms(bench.Mean(webGaps)), ms(bench.Percentile(webGaps, 100)), len(webGaps), ms(bench.SpreadOf(first).Median))
		}
		if len(apiGaps) > 0 {
			fmt.Fprintf(w, "%s, per-task cost (real time, all runs): an API slot idle between calls %.1f ms mean, %.1f ms p95 (%s field time each at this scale)\n",
				r.name, ms(bench.Mean(apiGaps)), ms(bench.Percentile(apiGaps, 95)), field(bench.Mean(apiGaps), o.scale))
		}
	}
}

// writeVersus prints each other row's medians over the two lanes', order
// by order.
func writeVersus(w io.Writer, o options, rs []row) {
	var lanesRow *row
	for i := range rs {
		if rs[i].name == lanesName {
			lanesRow = &rs[i]
		}
	}
	if lanesRow == nil {
		return
	}
	fmt.Fprintf(w, "\nagainst %s (median over median; %s)\n", lanesName, strings.Join(o.orders, " | "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rs {
		if r.name == lanesName || r.name == apiOnlyName {
			continue
		}
		var mk, wait []string
		for i, c := range r.cells {
			l := lanesRow.cells[i]
			mk = append(mk, fmt.Sprintf("%.2f×", float64(bench.Over(c.runs, makespan).Median)/float64(bench.Over(l.runs, makespan).Median)))
			wait = append(wait, fmt.Sprintf("%.1f×", float64(bench.Over(c.runs, apiMean).Median)/float64(bench.Over(l.runs, apiMean).Median)))
		}
		fmt.Fprintf(tw, "  %s\tmakespan %s\tAPI wait mean %s\n", r.name, strings.Join(mk, " | "), strings.Join(wait, " | "))
	}
	_ = tw.Flush()
}

// checks prints spoolgate's targets against the figures, order by order.
func checks(w io.Writer, o options, rs []row) {
	mark := func(ok bool) string {
		if ok {
			return "MET "
		}
		return "MISS"
	}
	find := func(name string) *row {
		for i := range rs {
			if rs[i].name == name {
				return &rs[i]
			}
		}
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "targets (medians; worst run where it says so)")
	lanesR, apiR := find(lanesName), find(apiOnlyName)
	for i, order := range o.orders {
		if lanesR != nil {
			c := lanesR.cells[i]
			r := bench.Over(c.runs, ratio)
			fmt.Fprintf(w, "  %s %s: two lanes within 5%% of their lower bound: %.3f× (worst run %.3f×)\n", mark(r.Median <= 1.05), order, r.Median, r.Max)
			coll, bad := bench.Over(c.runs, collisions).Max, bench.Over(c.runs, failed).Max+bench.Over(c.runs, lost).Max
			fmt.Fprintf(w, "  %s %s: two lanes, in every run: zero web collisions (worst %d), zero failed or lost (worst %d)\n", mark(coll == 0 && bad == 0), order, coll, bad)
		}
		if lanesR != nil && apiR != nil {
			m, a := bench.Over(lanesR.cells[i].runs, apiMean).Median, bench.Over(apiR.cells[i].runs, apiMean).Median
			d := 0.0
			if a > 0 {
				d = float64(m-a) / float64(a)
			}
			fmt.Fprintf(w, "  %s %s: API mean wait, mixed batch vs API-only batch, within 10%%: %s vs %s (%+.1f%%)\n",
				mark(d <= 0.10), order, field(m, o.scale), field(a, o.scale), 100*d)
		}
		// Issue 14's targets for two web sessions: within 5% of the bound,
		// and the API wait of the mixed batch within 5% of API-only.
		if sr := find(sessions2Name); sr != nil {
			c := sr.cells[i]
			r := bench.Over(c.runs, ratio)
			fmt.Fprintf(w, "  %s %s: 2 web sessions within 5%% of their lower bound: %.3f× (worst run %.3f×)\n", mark(r.Median <= 1.05), order, r.Median, r.Max)
			coll, bad := bench.Over(c.runs, collisions).Max, bench.Over(c.runs, failed).Max+bench.Over(c.runs, lost).Max
			fmt.Fprintf(w, "  %s %s: 2 web sessions, in every run: zero web collisions (worst %d), zero failed or lost (worst %d)\n", mark(coll == 0 && bad == 0), order, coll, bad)
			if apiR != nil {
				m, a := bench.Over(c.runs, apiMean).Median, bench.Over(apiR.cells[i].runs, apiMean).Median
				d := 0.0
				if a > 0 {
					d = float64(m-a) / float64(a)
				}
				fmt.Fprintf(w, "  %s %s: API mean wait, 2 web sessions' mixed batch vs API-only batch, within 5%%: %s vs %s (%+.1f%%)\n",
					mark(d <= 0.05), order, field(m, o.scale), field(a, o.scale), 100*d)
			}
		}
		// Issue 24: several sessions hand over like one lane: each row
		// within 1% of the offline hand-off of the same durations (the web
		// tasks in queue order to the first free session), in every run.
		for _, r := range rs {
			c := r.cells[i]
			if len(c.runs) == 0 || !strings.HasPrefix(r.name, "spoolgate") || c.runs[0].Limits.Sessions < 2 {
				continue
			}
			off := bench.HandOff(c.tasks, c.runs[0].Limits)
			var per []float64
			for _, x := range c.runs {
				per = append(per, float64(x.Makespan)/(float64(off)*x.Scale)) // Makespan is scaled time
			}
			worst := slices.Max(per)
			fmt.Fprintf(w, "  %s %s: %s within 1%% of the offline hand-off %s, every run: median %.3f×, runs %s\n",
				mark(worst <= 1.01), order, r.name, off.Round(time.Second), median(per), ratios(per))
		}
		for _, name := range []string{"pool 8, no gate", "pool 16, no gate", "pool 2, no gate"} {
			if r := find(name); r != nil {
				n := bench.Over(r.cells[i].runs, collisions).Median
				fmt.Fprintf(w, "  %s %s: %s produces web collisions: %d\n", mark(n > 0), order, name, n)
			}
		}
	}
}

// median is the middle of xs (the mean of the middle two for an even
// count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ratios lists xs as "1.012× 1.030×".
func ratios(xs []float64) string {
	var b []string
	for _, x := range xs {
		b = append(b, fmt.Sprintf("%.3f×", x))
	}
	return strings.Join(b, " ")
}

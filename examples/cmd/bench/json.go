package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// jsonRun is one run of one strategy in one order; times in field seconds.
type jsonRun struct {
	MakespanSeconds      float64 `json:"makespanSeconds"`
	Ratio                float64 `json:"ratio"`
	APIWaitMeanSeconds   float64 `json:"apiWaitMeanSeconds"`
	APIWaitP95Seconds    float64 `json:"apiWaitP95Seconds"`
	WebWaitMeanSeconds   float64 `json:"webWaitMeanSeconds"`
	WebGapMeanMs         float64 `json:"webGapMeanMs"`
	WebAttempts          int     `json:"webAttempts"`
	WebCollisions        int     `json:"webCollisions"`
	WebFailed            int     `json:"webFailed"`
	APIFailed            int     `json:"apiFailed"`
	Retries              int     `json:"retries"`
	Throttled            int     `json:"throttled"`
	Lost                 int     `json:"lost"`
	MaxWebAtOnce         int     `json:"maxWebAtOnce"`
	MaxAPIAtOnce         int     `json:"maxApiAtOnce"`
	MeasuredMakespanSecs float64 `json:"measuredMakespanSeconds"`
}

// jsonSpread is a Spread in field seconds (or a plain ratio).
type jsonSpread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

type jsonCell struct {
	Strategy          string     `json:"strategy"`
	Order             string     `json:"order"`
	Note              string     `json:"note"`
	Bound             string     `json:"boundFormula"`
	LowerBoundSeconds float64    `json:"lowerBoundSeconds"`
	Makespan          jsonSpread `json:"makespanSeconds"`
	Ratio             jsonSpread `json:"ratio"`
	APIWaitMean       jsonSpread `json:"apiWaitMeanSeconds"`
	Runs              []jsonRun  `json:"runs"`
}

func writeJSON(w io.Writer, o options, cells []*cell, machine string, core []coreFigure) error {
	fs := func(d time.Duration) float64 { return bench.Unscale(d, o.scale).Seconds() }
	ds := func(s bench.Spread[time.Duration]) jsonSpread {
		return jsonSpread{fs(s.Median), fs(s.Min), fs(s.Max)}
	}
	tasks := bench.FieldReport(o.seed)
	out := struct {
		Scale      float64      `json:"scale"`
		Seed       uint64       `json:"seed"`
		Repeat     int          `json:"repeat"`
		Orders     []string     `json:"orders"`
		Web        int          `json:"web"`
		API        int          `json:"api"`
		SumWeb     float64      `json:"sumWebSeconds"`
		SumAPI     float64      `json:"sumApiSeconds"`
		APIConc    int          `json:"apiConcurrency"`
		Quota      int          `json:"quota"`
		WebStandIn string       `json:"webStandIn"`
		Machine    string       `json:"machine"`
		TimesAre   string       `json:"timesAre"`
		Strategies []jsonCell   `json:"strategies"`
		Core       []coreFigure `json:"core,omitempty"`
	}{Scale: o.scale, Seed: o.seed, Repeat: o.repeat, Orders: o.orders,
		Web: bench.Count(tasks, taskfile.KindWeb), API: bench.Count(tasks, taskfile.KindAPI),
		SumWeb: bench.Sum(tasks, taskfile.KindWeb).Seconds(), SumAPI: bench.Sum(tasks, taskfile.KindAPI).Seconds(),
		APIConc: o.apiConc, Quota: o.quota, WebStandIn: "chat stand-in HTTP form (POST /api/generate), not a browser", Machine: machine,
		TimesAre: "field-report seconds (measured ÷ scale), except measuredMakespanSeconds", Core: core}
	for _, c := range cells {
		if len(c.runs) == 0 {
			continue
		}
		r0 := c.runs[0]
		r := bench.Over(c.runs, ratio)
		jc := jsonCell{Strategy: r0.Strategy, Order: c.order, Note: r0.Note, Bound: r0.Limits.Formula(c.tasks),
			LowerBoundSeconds: bench.LowerBound(c.tasks, r0.Limits).Seconds(),
			Makespan:          ds(bench.Over(c.runs, makespan)), Ratio: jsonSpread{r.Median, r.Min, r.Max},
			APIWaitMean: ds(bench.Over(c.runs, apiMean))}
		for _, x := range c.runs {
			jc.Runs = append(jc.Runs, jsonRun{
				MakespanSeconds: fs(x.Makespan), Ratio: x.Ratio(), APIWaitMeanSeconds: fs(bench.Mean(x.APIWaits)),
				APIWaitP95Seconds: fs(bench.Percentile(x.APIWaits, 95)), WebWaitMeanSeconds: fs(bench.Mean(x.WebWaits)),
				WebGapMeanMs: ms(bench.Mean(x.WebGaps)), WebAttempts: x.WebAttempts, WebCollisions: x.WebCollisions,
				WebFailed: x.WebFailed, APIFailed: x.APIFailed, Retries: x.Retries, Throttled: x.Throttled, Lost: x.Lost,
				MaxWebAtOnce: x.MaxWebAtOnce, MaxAPIAtOnce: x.MaxAPIAtOnce, MeasuredMakespanSecs: x.Makespan.Seconds(),
			})
		}
		out.Strategies = append(out.Strategies, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

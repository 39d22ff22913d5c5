package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
)

// fakeCells are the table's cells for two strategies in both orders, each
// run three times, as runBench would leave them.
func fakeCells(o options) []*cell {
	tasks := bench.FieldReport(o.seed)
	mk := func(name string, l bench.Limits, ts []bench.Task, makespans ...time.Duration) []bench.Result {
		var rs []bench.Result
		for _, m := range makespans {
			rs = append(rs, bench.Result{Strategy: name, Note: "note", Scale: o.scale, Limits: l,
				Makespan: m, LowerBound: time.Duration(float64(bench.LowerBound(ts, l)) * o.scale),
				APIWaits: []time.Duration{m / 10}})
		}
		return rs
	}
	pool := &bench.Pool{Workers: 8, WebSlots: 1, APISlots: 3, Quota: o.quota}
	lanesL := bench.Limits{Sessions: 1, API: 3}
	var cells []*cell
	for _, order := range o.orders {
		ts := bench.Order(tasks, order)
		cells = append(cells,
			&cell{st: strategy{key: "twosem8"}, order: order, tasks: ts, runs: mk(pool.Name(), pool.Limits(), ts, 3*time.Second, 2*time.Second, 4*time.Second)},
			&cell{st: strategy{key: "lanes"}, order: order, tasks: ts, runs: mk(lanesName, lanesL, ts, 3*time.Second, 3*time.Second, 3*time.Second)},
			&cell{st: strategy{key: "apionly"}, order: order, tasks: apiOnly(ts), runs: mk(apiOnlyName, lanesL, apiOnly(ts), time.Second, time.Second, time.Second)})
	}
	return cells
}

func TestWriteTable(t *testing.T) {
	o, err := parseFlags([]string{"-scale", "0.01"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeTable(&b, o, fakeCells(o), "")
	out := b.String()
	lines := strings.Split(out, "\n")
	var title, head int
	for i, l := range lines {
		if strings.Contains(l, "| web first") {
			title, head = i, i+1
			break
		}
	}
	if head == 0 || !strings.Contains(lines[head], "makespan") {
		t.Fatalf("no order titles above the header:\n%s", out)
	}
	// Each order's title starts at its columns' "|".
	for _, want := range []string{"| web first", "| mixed"} {
		at := strings.Index(lines[title], want)
		if at < 0 {
			t.Fatalf("title line %q lacks %q", lines[title], want)
		}
		col := len([]rune(lines[title][:at]))
		if r := []rune(lines[head]); col >= len(r) || r[col] != '|' {
			t.Errorf("%q starts at column %d, not above a |:\n%s\n%s", want, col, lines[title], lines[head])
		}
	}
	// Three strategies, three formulas: each printed once, and the API-only
	// batch's bound names no web term.
	for _, want := range []string{
		"B1 = max(Σweb/1, Σapi/3, Σall/8, longest task)",
		"B2 = max(Σweb/1, Σapi/3, longest task)",
		"B3 = max(Σapi/3, longest task) = 2m6s: spoolgate, API-only batch",
		"the vendors' limits alone (one session, quota 5)",
	} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q printed %d times:\n%s", want, n, out)
		}
	}
	// The median and spread of 3 s, 2 s, 4 s at scale 0.01, in minutes.
	row := ""
	for _, l := range lines[head+1:] {
		if strings.Contains(l, "two semaphores") {
			row = l
			break
		}
	}
	if !strings.Contains(row, "5.0 (3.3–6.7)") || strings.Count(row, "|") != 2 {
		t.Errorf("two-semaphore row %q: want makespan 5.0 (3.3–6.7) in both orders", row)
	}
	if !strings.Contains(out, "makespan 1.00× | 1.00×") {
		t.Errorf("no comparison against the two lanes:\n%s", out)
	}
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args   []string
		orders string
		usage  bool
	}{
		{nil, "web-first,mixed", false},
		{[]string{"-orders", "mixed"}, "mixed", false},
		{[]string{"-orders", "mixed, mixed,web-first"}, "mixed,web-first", false},
		{[]string{"-orders", "random"}, "", true},
		{[]string{"-repeat", "0"}, "", true},
		{[]string{"-scale", "2"}, "", true},
		{[]string{"-nosuchflag"}, "", true},
		{[]string{"-only", "lanes, core"}, "web-first,mixed", false},
		{[]string{"-only", "lane"}, "", true},
	} {
		o, err := parseFlags(c.args, io.Discard)
		var u usageError
		if got := errors.As(err, &u); got != c.usage {
			t.Errorf("%q: err %v, want usage error %v", c.args, err, c.usage)
			continue
		}
		if !c.usage && strings.Join(o.orders, ",") != c.orders {
			t.Errorf("%q: orders %q, want %q", c.args, o.orders, c.orders)
		}
	}
}

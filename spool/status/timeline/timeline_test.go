package timeline

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func at(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }

// sample is a morning of a batch on both lanes: a retry, a failure, a
// cancel, a usage limit and its hold, a pause, a running attempt.
func sample() Chart {
	api := []*Bar{
		{Start: at(1), End: at(9), Outcome: Success, Task: "brief-01", Batch: "spring", Model: "gpt-x", Attempt: 1, Href: "/task/api/brief-01"},
		{Start: at(2), End: at(5), Outcome: Retried, Class: "transient", Task: "brief-02", Batch: "spring", Model: "gpt-x", Attempt: 1},
		{Start: at(6), End: at(14), Outcome: Success, Task: "brief-02", Batch: "spring", Model: "gpt-x", Attempt: 2},
		{Start: at(3), End: at(20), Outcome: Failed, Class: "permanent", Task: "brief-03", Batch: "spring", Model: "gpt-x", Attempt: 1},
		{Start: at(10), End: at(12), Outcome: Canceled, Class: "canceled", Task: "brief-04", Batch: "spring", Model: "gpt-x", Attempt: 1},
		{Start: at(40), Outcome: Running, Task: "brief-05", Batch: "spring", Model: "gpt-x", Attempt: 1},
	}
	for _, b := range api {
		b.Lane = "api"
	}
	n := PackSlots(api, at(50), func(i int) string { return fmt.Sprintf("api/%d", i+1) })
	c := Chart{From: t0, To: at(60), Now: at(50), Loc: time.UTC, Labels: LabelsEN}
	for i := range n {
		c.Rows = append(c.Rows, Row{Key: fmt.Sprintf("api/%d", i+1), Lane: "api", Label: fmt.Sprintf("slot %d", i+1)})
	}
	c.Rows = append(c.Rows, Row{Key: "web/alice", Lane: "web", Label: "alice"}, Row{Key: "web/bob", Lane: "web", Label: "bob"})
	for _, b := range api {
		c.Bars = append(c.Bars, *b)
	}
	c.Bars = append(c.Bars,
		Bar{Row: "web/alice", Lane: "web", Start: at(1), End: at(12), Outcome: Success, Task: "web-01", Batch: "spring", Model: "chat", Attempt: 1},
		Bar{Row: "web/alice", Lane: "web", Start: at(13), End: at(15), Outcome: Held, Task: "web-02", Batch: "spring", Model: "chat", Attempt: 1},
		Bar{Row: "web/bob", Lane: "web", Start: at(2), End: at(18), Outcome: Failed, Class: "transient", Task: "web-03", Batch: "spring", Model: "chat", Attempt: 3},
		Bar{Row: "web/bob", Lane: "web", Start: at(19), End: at(33), Outcome: Success, Task: "web-02", Batch: "spring", Model: "chat", Attempt: 1},
	)
	c.Spans = append(c.Spans,
		Span{Kind: Hold, Lane: "web", Row: "web/alice", Start: at(15), End: at(35), Note: "You have reached your limit"},
		Span{Kind: Pause, Lane: "api", Start: at(22), End: at(30), Note: "paused by ops1"},
	)
	return c
}

func TestRender_Golden(t *testing.T) {
	hostile := sample()
	hostile.Bars[0].Task = `<script>alert(1)</script>`
	hostile.Bars[0].Batch = "b\u202e\x1b[31m\"'&"
	hostile.Rows[len(hostile.Rows)-1].Label = `</text><script>x</script>`
	many := sample()
	many.Bars = nil
	for i := range 300 { // a busy day: more attempts than pixels
		s := t0.Add(time.Duration(i) * 10 * time.Second)
		o := Success
		if i%50 == 7 {
			o = Retried
		}
		many.Bars = append(many.Bars, Bar{Row: "api/1", Lane: "api", Start: s, End: s.Add(9 * time.Second), Outcome: o, Task: fmt.Sprintf("t%03d", i), Attempt: 1})
	}
	many.From, many.To = t0, t0.Add(24*time.Hour)
	zh := sample()
	zh.Labels = LabelsZH
	for _, tc := range []struct {
		name string
		c    Chart
	}{
		{"sample", sample()},
		{"hostile", hostile},
		{"many", many},
		{"zh", zh},
		{"empty", Chart{From: t0, To: at(120), Now: at(60), Labels: LabelsEN}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Document(&b, tc.c); err != nil {
				t.Fatal(err)
			}
			wellFormed(t, b.Bytes())
			golden := filepath.Join("testdata", tc.name+".svg")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the golden file (run with -update and look at it)", golden)
			}
		})
	}
}

// wellFormed parses the SVG as XML: a file must open in any viewer.
func wellFormed(t *testing.T, data []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}

func TestRender_Bars(t *testing.T) {
	c := sample()
	var b bytes.Buffer
	if err := Render(&b, c); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if got := strings.Count(s, `class="tl-bar"`); got != len(c.Bars) {
		t.Errorf("%d bars drawn, want one per attempt: %d", got, len(c.Bars))
	}
	for _, o := range []Outcome{Success, Retried, Failed, Canceled, Held, Running} {
		if !strings.Contains(s, `data-outcome="`+string(o)+`"`) || !strings.Contains(s, `fill="`+Colour(o)+`"`) {
			t.Errorf("no %s bar in its colour", o)
		}
	}
	if strings.Count(s, `class="tl-span"`) != 2 || !strings.Contains(s, `class="tl-now"`) {
		t.Errorf("want 2 spans and a now-line")
	}
	// No script, and no asset from elsewhere: not even the namespace inline.
	if strings.Contains(s, "<script") || strings.Contains(s, "http") {
		t.Errorf("SVG holds a script or an external reference")
	}
}

func TestRender_Hostile(t *testing.T) {
	c := sample()
	c.Bars[0].Task = `<script>alert(1)</script>`
	c.Bars[0].Href = `javascript:alert(1)"`
	c.Rows[0].Label = `<img src=x onerror=alert(1)>`
	var b bytes.Buffer
	if err := Render(&b, c); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "<script") || strings.Contains(s, "<img") || strings.Contains(s, `alert(1)"`) {
		t.Errorf("markup from a task file reached the SVG: %s", s)
	}
}

// A day of short attempts is drawn as a few bars, in the colour of their
// most severe outcome, that count every attempt.
func TestRender_Dense(t *testing.T) {
	c := Chart{From: t0, To: t0.Add(24 * time.Hour), Now: t0.Add(24 * time.Hour), Labels: LabelsEN, Rows: []Row{{Key: "r", Lane: "api", Label: "slot 1"}}}
	for i := range 5000 {
		s := t0.Add(time.Duration(i) * 15 * time.Second)
		o := Success
		if i == 2500 {
			o = Failed
		}
		c.Bars = append(c.Bars, Bar{Row: "r", Start: s, End: s.Add(14 * time.Second), Outcome: o, Task: fmt.Sprint(i)})
	}
	var b bytes.Buffer
	if err := Render(&b, c); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	rects := strings.Count(s, `class="tl-bar"`)
	n := 0
	for _, m := range regexp.MustCompile(`data-n="(\d+)"`).FindAllStringSubmatch(s, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	if rects > 300 || n != 5000 || strings.Count(s, `data-outcome="failed"`) != 1 || !strings.Contains(s, "1 failed") {
		t.Errorf("%d rects counting %d attempts (want at most one a 4-pixel sliver, counting 5000, one red), %d bytes", rects, n, b.Len())
	}
}

func TestPackSlots(t *testing.T) {
	bars := []*Bar{
		{Task: "a", Start: at(0), End: at(10)},
		{Task: "b", Start: at(1), End: at(3)},
		{Task: "c", Start: at(3), End: at(4)}, // b's row is free again at 3
		{Task: "d", Start: at(2), End: at(5)},
		{Task: "e", Start: at(11)}, // running
	}
	n := PackSlots(bars, at(20), func(i int) string { return fmt.Sprint(i) })
	got := map[string]string{}
	for _, b := range bars {
		got[b.Task] = b.Row
	}
	want := map[string]string{"a": "0", "b": "1", "d": "2", "c": "1", "e": "0"}
	if n != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PackSlots = %d %v, want 3 %v", n, got, want)
	}
}

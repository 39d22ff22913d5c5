package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// row is the part of a `spoolgate results` JSONL row the summary reads.
type row struct {
	TaskID       string     `json:"taskId"`
	Lane         string     `json:"lane"`
	State        string     `json:"state"`
	Attempt      int        `json:"attempt"`
	SubmittedAt  *time.Time `json:"submittedAt"`
	StartedAt    *time.Time `json:"startedAt"`
	FinishedAt   *time.Time `json:"finishedAt"`
	ErrorClass   string     `json:"errorClass"`
	Error        string     `json:"error"`
	Result       string     `json:"result"`
	ResultFormat string     `json:"resultFormat"`
	ResultMethod string     `json:"resultMethod"`
	ResultCheck  string     `json:"resultCheck"`
	ResultDiff   string     `json:"resultDiff"`
	Reasoning    string     `json:"reasoning"`
}

type laneSum struct {
	n, success, failed, retries int
	waits                       []time.Duration
	work                        time.Duration // Σ durations asked of the stand-ins, scaled
}

type summary struct {
	scale       float64
	apiConc     int
	makespan    time.Duration
	lowerBound  time.Duration
	lanes       map[taskfile.Kind]*laneSum
	lost        int
	failed      int
	failures    []string
	launch      []time.Duration
	closing     []time.Duration
	sessions    int            // web sessions (accounts)
	perAccount  map[string]int // the chat stand-in's most generations at once, per account
	total       int            // ... and over all accounts
	rows        map[string]row // the result table by taskId
	sampleID    string         // a web task whose result the summary shows
	sampleWant  string         // ... and the Markdown the chat stand-in streamed for it
	sampleThink string         // ... and the thinking it streamed before it
	modern      bool           // the chat page is the Markdown one
}

// summarize reads the batch's result table through `spoolgate results`.
func summarize(ctx context.Context, bin, cfgPath, spoolDir string, tasks []bench.Task, ids []string, apiConc, sessions int, scale float64) (*summary, error) {
	out, err := exec.CommandContext(ctx, bin, "results", "--config", cfgPath, "--batch", batchName, "--format", "jsonl").Output()
	if err != nil {
		return nil, fmt.Errorf("spoolgate results: %w", err)
	}
	rows := map[string]row{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("spoolgate results: %w", err)
		}
		rows[r.TaskID] = r
	}
	s := &summary{scale: scale, apiConc: apiConc, sessions: max(sessions, 1), lanes: map[taskfile.Kind]*laneSum{taskfile.KindWeb: {}, taskfile.KindAPI: {}}}
	s.lowerBound = time.Duration(float64(bench.LowerBound(tasks, bench.Limits{Sessions: s.sessions, API: apiConc})) * scale)
	kind := map[string]taskfile.Kind{}
	for _, t := range tasks {
		kind[t.ID] = t.Kind
		s.lanes[t.Kind].work += time.Duration(float64(t.Dur) * scale)
	}
	var first, last time.Time
	for _, id := range ids {
		r, ok := rows[id]
		ls := s.lanes[kind[id]]
		if ls == nil {
			return nil, fmt.Errorf("submit printed an unknown taskId %q", id)
		}
		ls.n++
		if !ok || (r.State != "success" && r.State != "failed" && r.State != "canceled") {
			s.lost++
			continue
		}
		if r.State == "success" {
			ls.success++
		} else {
			ls.failed++
			s.failed++
			s.failures = append(s.failures, fmt.Sprintf("%s %s (%s): %s", id, r.State, r.ErrorClass, r.Error))
		}
		ls.retries += max(r.Attempt-1, 0)
		if r.SubmittedAt != nil && (first.IsZero() || r.SubmittedAt.Before(first)) {
			first = *r.SubmittedAt
		}
		if r.FinishedAt != nil && r.FinishedAt.After(last) {
			last = *r.FinishedAt
		}
		if r.StartedAt != nil && r.SubmittedAt != nil {
			ls.waits = append(ls.waits, r.StartedAt.Sub(*r.SubmittedAt))
		}
	}
	if !first.IsZero() && !last.IsZero() {
		s.makespan = last.Sub(first)
	}
	s.launch, s.closing = webStages(spoolDir)
	s.rows = rows
	return s, nil
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func (s *summary) print(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "summary (measured seconds; the field report's times are these × "+fmt.Sprintf("%.0f", 1/s.scale)+")")
	var per []string
	for _, a := range slices.Sorted(maps.Keys(s.perAccount)) {
		per = append(per, fmt.Sprintf("%s %d", a, s.perAccount[a]))
	}
	fmt.Fprintf(w, "  web sessions %d (one account each, one task at a time each); the chat stand-in saw at most this many generations at once: %s; in total %d\n",
		s.sessions, strings.Join(per, ", "), s.total)
	fmt.Fprintf(w, "  makespan     %s   lower bound max(Σweb/%d, longest task, Σapi/%d) = %s   ratio %.2f\n",
		secs(s.makespan), s.sessions, s.apiConc, secs(s.lowerBound), float64(s.makespan)/float64(s.lowerBound))
	for _, k := range taskfile.Kinds {
		ls := s.lanes[k]
		fmt.Fprintf(w, "  %-3s lane     %2d tasks  success %2d  failed %d  retries %d  wait p50 %s  p95 %s  (Σ answer time %s)\n",
			k, ls.n, ls.success, ls.failed, ls.retries,
			secs(bench.Percentile(ls.waits, 50)), secs(bench.Percentile(ls.waits, 95)), secs(ls.work))
	}
	web := s.lanes[taskfile.KindWeb]
	// Each session runs its share of the web tasks one after another.
	share := web.work / time.Duration(s.sessions)
	perSession := time.Duration((web.n + s.sessions - 1) / s.sessions)
	if web.n > 0 && s.makespan > share {
		per := (s.makespan - share) / perSession
		fmt.Fprintf(w, "  the web lane's cost beyond the answers: %s per web task, not time-scaled: %d browser launches for %d web tasks (warm sessions: web.warm), launch %s (mean), %d closes in a task's time (mean %s),\n",
			secs(per), len(s.launch), web.n, secs(bench.Mean(s.launch)), len(s.closing), secs(bench.Mean(s.closing)))
		if s.modern {
			fmt.Fprintf(w, "    the rest is page load, the driver's wait for the answer's end (its response's end or the action bar), and the lane's claim and writes\n")
		} else {
			fmt.Fprintf(w, "    the rest is page load, the driver's quiet period after the answer (the site's quiet: 200ms in examples/demo.yaml), and the lane's claim and writes\n")
		}
		field := float64(bench.Unscale(share, s.scale))
		fmt.Fprintf(w, "  at real speed (scale 1) the same per-task cost would make the ratio about %.3f\n",
			(field+float64(per)*float64(perSession))/float64(bench.Unscale(s.lowerBound, s.scale)))
	}
	fmt.Fprintln(w, "  wait = startedAt - submittedAt (a retried task's startedAt is its last attempt's)")
	s.printSample(w)
	if s.lost > 0 {
		fmt.Fprintf(w, "  LOST: %d tasks have no final state\n", s.lost)
	}
	for _, f := range s.failures {
		fmt.Fprintln(w, "  FAILED:", strings.TrimSpace(f))
	}
}

// webStages reads the web lane's task logs for how long the browser's
// launch and close took (the "took=" of those lines), to say where the web
// lane's cost beyond the answers goes.
func webStages(spoolDir string) (launch, closing []time.Duration) {
	files, _ := filepath.Glob(filepath.Join(spoolDir, "web", "logs", "*.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			m := tookRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			d, err := time.ParseDuration(m[1])
			if err != nil {
				continue
			}
			switch {
			case strings.Contains(line, `msg="browser: launched"`):
				launch = append(launch, d)
			case strings.Contains(line, `msg="browser: closed`):
				closing = append(closing, d)
			}
		}
	}
	return launch, closing
}

var tookRE = regexp.MustCompile(`\btook=([0-9.]+[a-zµ]+)`)

// sampleWeb is the web task the summary shows: the first by id.
func sampleWeb(tasks []bench.Task) string {
	id := ""
	for _, t := range tasks {
		if t.Kind == taskfile.KindWeb && (id == "" || t.ID < id) {
			id = t.ID
		}
	}
	return id
}

// printSample shows one web result as the task got it, and whether it is
// the Markdown the chat page streamed.
func (s *summary) printSample(w io.Writer) {
	r, ok := s.rows[s.sampleID]
	if s.sampleID == "" || !ok || r.State != "success" {
		return
	}
	format, method := r.ResultFormat, r.ResultMethod
	if format == "" {
		format, method = "text", "text"
	}
	fmt.Fprintf(w, "  one web result, %s (resultFormat %s, resultMethod %s, resultCheck %s):\n", s.sampleID, format, method, cmp.Or(r.ResultCheck, "-"))
	if r.ResultDiff != "" {
		fmt.Fprintf(w, "  it differs from what the page showed: %s\n", r.ResultDiff)
	}
	lines := strings.Split(r.Result, "\n")
	for i, line := range lines {
		if i == 30 {
			fmt.Fprintf(w, "    | … %d more lines\n", len(lines)-i)
			break
		}
		fmt.Fprintln(w, "    | "+line)
	}
	if r.Reasoning != "" {
		same := "differs from"
		if r.Reasoning == s.sampleThink {
			same = "is, character for character,"
		}
		fmt.Fprintf(w, "  its thinking, kept apart in `reasoning` (never in the result), %s the thinking the page streamed:\n", same)
		for _, line := range strings.Split(r.Reasoning, "\n") {
			fmt.Fprintln(w, "    > "+line)
		}
	}
	if r.Result == s.sampleWant {
		fmt.Fprintln(w, "  it is, character for character, the Markdown the chat page streamed")
		return
	}
	want, got := strings.Split(s.sampleWant, "\n"), strings.Split(r.Result, "\n")
	n := 0
	for n < len(want) && n < len(got) && want[n] == got[n] {
		n++
	}
	fmt.Fprintf(w, "  it differs from the Markdown the chat page streamed from line %d on (the page streamed %q there)\n", n+1, at(want, n))
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/doors/frontdoor"
	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// doorTasks is how many tasks each way the front door's figures time.
const doorTasks = 200

// doorFigures times the front door's own cost per request (issue 41)
// beside the same tasks dropped as files, in one run on one daemon whose
// executor answers at once, alternating one task each way:
//
//   - submit → durable: a file is Store.Submit's durable drop into
//     api/incoming/; a door request is the time from sending a streamed
//     POST /v1/chat/completions to its first line, which the door writes
//     only once the task is durable in the same folder;
//   - task end → last byte: from the daemon's OnFinal (the result
//     written in done/) to the file's record read back from done/ (the
//     best a script can do: it reads at that very moment) or to the
//     stream's [DONE].
//
// The door's own cost is the difference of the medians (target ≤ 5 ms).
func doorFigures(ctx context.Context, o options, stderr io.Writer) ([]coreFigure, error) {
	dir, err := os.MkdirTemp(o.dir, "spoolgate-door-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg, err := bench.Config(dir, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", 5, 2, 10*time.Millisecond)
	if err != nil {
		return nil, err
	}
	tok, hash := frontdoor.NewToken()
	cfg.Tokens = map[string]config.TokenConfig{"bench": {Hash: hash, Models: []string{"*"}}}
	store := spool.NewStore(cfg, nil)
	door := frontdoor.New(store, nil)
	var mu sync.Mutex
	ended := map[string]time.Time{}
	finals := make(chan string, 1)
	d := &lanes.Daemon{Store: store, Executors: map[taskfile.Kind]attempt.Executor{taskfile.KindAPI: &instant{}},
		Hooks: lanes.Hooks{OnFinal: func(_ taskfile.Kind, t *taskfile.Task) {
			mu.Lock()
			ended[t.TaskID] = time.Now()
			mu.Unlock()
			select {
			case finals <- t.TaskID:
			default:
			}
		}}.And(door.Hooks())}
	if err := d.Start(ctx); err != nil {
		return nil, err
	}
	defer stopDaemon(d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: door, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/v1/chat/completions"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	endOf := func(id string) (time.Time, error) {
		deadline := time.After(30 * time.Second)
		for {
			mu.Lock()
			at, ok := ended[id]
			mu.Unlock()
			if ok {
				return at, nil
			}
			select {
			case <-finals:
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				return time.Time{}, fmt.Errorf("door bench: task %s did not end in 30s", id)
			}
		}
	}
	in := store.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	var fileSubmit, fileEnd, doorSubmit, doorEnd []time.Duration
	fmt.Fprintf(stderr, "bench: the front door: %d tasks each way ...\n", doorTasks)
	for i := range doorTasks {
		// A file.
		id := fmt.Sprintf("file-%04d", i)
		data := taskData(id)
		f0 := time.Now()
		if _, err := store.Submit(in, id, data); err != nil {
			return nil, err
		}
		fileSubmit = append(fileSubmit, time.Since(f0))
		at, err := endOf(id)
		if err != nil {
			return nil, err
		}
		if _, err := store.Read(taskfile.KindAPI, taskfile.DirDone, id); err != nil {
			return nil, err
		}
		fileEnd = append(fileEnd, time.Since(at))
		// The same task through the door.
		body := fmt.Sprintf(`{"model":%q,"stream":true,"messages":[{"role":"user","content":"Write launch copy door-%04d."}]}`, bench.APIModel, i)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		d0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		sub, last, err := readStream(resp)
		if err != nil {
			return nil, err
		}
		_, taskID, _ := strings.Cut(resp.Header.Get("X-Spoolgate-Task"), "/")
		if at, err = endOf(taskID); err != nil {
			return nil, err
		}
		doorSubmit = append(doorSubmit, sub.Sub(d0))
		doorEnd = append(doorEnd, last.Sub(at))
	}
	med := func(ds []time.Duration) float64 { return ms(bench.Percentile(ds, 50)) }
	fig := func(name string, door, file []time.Duration, what string) coreFigure {
		return coreFigure{Name: name, Value: med(door), Unit: "ms", Baseline: med(file), BaseUnit: "ms", Ratio: med(door) / max(med(file), 0.001),
			Note: fmt.Sprintf("the door's own cost %.2f ms a request (median door − median file; target ≤ 5 ms; p95 door %.2f ms, file %.2f ms); %s; %d tasks each way, alternating, one daemon",
				med(door)-med(file), ms(bench.Percentile(door, 95)), ms(bench.Percentile(file, 95)), what, doorTasks)}
	}
	return []coreFigure{
		fig("door submit→durable", doorSubmit, fileSubmit, "streamed request sent → its first line (written once the task is durable in api/incoming/); baseline: Store.Submit of the same task as a file"),
		fig("door end→last byte", doorEnd, fileEnd, "the daemon's OnFinal → the stream's [DONE]; baseline: OnFinal → the record read back from done/"),
	}, nil
}

// readStream reads a door's stream: when its first line came, and when
// [DONE] did.
func readStream(resp *http.Response) (first, done time.Time, err error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return first, done, fmt.Errorf("door bench: status %d: %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if first.IsZero() {
			first = time.Now()
		}
		if line == "data: [DONE]" {
			done = time.Now()
			_, _ = io.Copy(io.Discard, resp.Body)
			return first, done, nil
		}
	}
	if err := sc.Err(); err != nil {
		return first, done, err
	}
	return first, done, errors.New("door bench: the stream ended without [DONE]")
}

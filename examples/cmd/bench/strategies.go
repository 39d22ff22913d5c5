package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// strategy is one row of the table.
type strategy struct {
	// key names it for -only.
	key string
	// tasks picks the strategy's batch from the workload in one order.
	tasks func([]bench.Task) []bench.Task
	// run puts tasks through the strategy once, on fresh stand-ins.
	run func(ctx context.Context, env *stands, tasks []bench.Task) (bench.Result, error)
}

// strategies are the table's rows, in its order. A row is one entry: a
// further spoolgate configuration (say, several web sessions) is one more
// entry whose Limits give its lower bound.
func strategies(o options, log *slog.Logger) []strategy {
	backoff := time.Duration(float64(o.backoff) * o.scale)
	pool := func(key string, workers, webSlots, apiSlots int) strategy {
		return strategy{key: key, tasks: all, run: func(ctx context.Context, s *stands, tasks []bench.Task) (bench.Result, error) {
			p := &bench.Pool{Workers: workers, WebSlots: webSlots, APISlots: apiSlots, MaxRetries: o.maxRetries,
				Backoff: backoff, Scale: o.scale, Exec: s.exec, Models: bench.Models(s.cfg), Quota: o.quota}
			return p.Run(ctx, tasks), ctx.Err()
		}}
	}
	twoLanes := func(key, name string, pick func([]bench.Task) []bench.Task) strategy {
		return strategy{key: key, tasks: pick, run: func(ctx context.Context, s *stands, tasks []bench.Task) (bench.Result, error) {
			// Only the lanes of kinds in the batch run, as only they would.
			ex := map[taskfile.Kind]attempt.Executor{}
			for k, e := range s.exec {
				if bench.Count(tasks, k) > 0 {
					ex[k] = e
				}
			}
			l := &bench.Lanes{Cfg: s.cfg, Exec: ex, Scale: o.scale, Quota: o.quota, Name: name, Log: log}
			return l.Run(ctx, tasks)
		}}
	}
	// sessions runs the two lanes with n web sessions (accounts s1..sN of
	// the stand-in, each its own session), on a config of its own.
	sessions := func(key, name string, n int) strategy {
		return strategy{key: key, tasks: all, run: func(ctx context.Context, s *stands, tasks []bench.Task) (bench.Result, error) {
			cfg, err := bench.ConfigSessions(filepath.Join(s.dir, key), s.api.URL(), s.chat.URL(), o.apiConc, o.maxRetries, backoff, n)
			if err != nil {
				return bench.Result{}, err
			}
			l := &bench.Lanes{Cfg: cfg, Exec: s.exec, Scale: o.scale, Quota: o.quota, Name: name, Log: log}
			return l.Run(ctx, tasks)
		}}
	}
	return []strategy{
		pool("pool8", 8, 0, 0),
		pool("pool16", 16, 0, 0),
		pool("pool2", 2, 0, 0),
		pool("sem8", 8, 1, 0),
		pool("twosem8", 8, 1, o.apiConc),
		twoLanes("lanes", "spoolgate two lanes", all),
		twoLanes("apionly", "spoolgate, API-only batch", apiOnly),
		sessions("sessions2", sessions2Name, 2),
		sessions("sessions3", "spoolgate, 3 web sessions", 3),
	}
}

// sessions2Name names the two-sessions row, which has targets of its own.
const sessions2Name = "spoolgate, 2 web sessions"

func strategyKeys() []string {
	var keys []string
	for _, s := range strategies(options{}, nil) {
		keys = append(keys, s.key)
	}
	return keys
}

func all(tasks []bench.Task) []bench.Task { return tasks }

func apiOnly(tasks []bench.Task) []bench.Task {
	var out []bench.Task
	for _, t := range tasks {
		if t.Kind == taskfile.KindAPI {
			out = append(out, t)
		}
	}
	return out
}

// stands are one run's fresh stand-ins and executors.
type stands struct {
	api  *apistand.Server
	chat *chatstand.Server
	cfg  *config.Config
	exec map[taskfile.Kind]attempt.Executor
	dir  string
}

func (s *stands) close() {
	if c, ok := s.exec[taskfile.KindAPI].(interface{ Close() }); ok {
		c.Close()
	}
	_ = s.api.Close()
	_ = s.chat.Close()
	_ = os.RemoveAll(s.dir)
}

func newStands(o options) (*stands, error) {
	s := &stands{exec: map[taskfile.Kind]attempt.Executor{}}
	var err error
	if s.api, err = apistand.Start(apistand.Options{Quota: o.quota, Scale: o.scale}); err != nil {
		return nil, err
	}
	if s.chat, err = chatstand.Start(chatstand.Options{Scale: o.scale, LateCollisions: o.late}); err != nil {
		_ = s.api.Close()
		return nil, err
	}
	if s.dir, err = os.MkdirTemp(o.dir, "spoolgate-bench-"); err != nil {
		s.close()
		return nil, err
	}
	backoff := time.Duration(float64(o.backoff) * o.scale)
	if s.cfg, err = bench.Config(s.dir, s.api.URL(), s.chat.URL(), o.apiConc, o.maxRetries, backoff); err != nil {
		s.close()
		return nil, err
	}
	api, err := apimodel.New(s.cfg, os.Getenv)
	if err != nil {
		s.close()
		return nil, err
	}
	s.exec[taskfile.KindAPI] = api
	s.exec[taskfile.KindWeb] = &bench.ChatHTTP{URL: s.chat.URL()}
	return s, nil
}

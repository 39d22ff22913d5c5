package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// answerEndFigures measures issue 18's row with the real web lane: a
// real headless Chromium drives the chat stand-in's modern page through
// spoolgate's own daemon. Per task: the time from the stand-in writing its
// stream's end ([DONE]) to the task's final durable write (the lane's
// OnAttemptEnd runs right after it), on the same page judged two ways,
// interleaved task by task: with positive signals (its response's end,
// its action bar) and by `quiet` alone (the site without done: and
// network:, quiet 1 s, the default). And the per-task cost beyond the
// answer: the attempt's wall time less the answer's own streaming time
// (launch, page load, typing, waiting for the end, writing). And what
// checking each result against the page costs (issue 36): the same page
// with `verify: off` takes its turn too, and each checked task's log says
// how long its comparisons took.
func answerEndFigures(ctx context.Context, o options, stderr io.Writer) ([]coreFigure, error) {
	stand, dir, done, err := webBenchStart(o, "bench-answer-*")
	if stand == nil || err != nil {
		return nil, err // no stand-in and no error: no row on this OS
	}
	defer done()
	// The same page behind a third party that never answers (issue 55's
	// point 6: a challenge widget's script and frame, an ad, a pixel
	// blocked by a firewall), on a stand-in of its own (its own cookie:
	// cookies are per host, not port).
	hang, err := hangingOrigin()
	if err != nil {
		return nil, err
	}
	defer hang.Close()
	tp, err := chatstand.Start(chatstand.Options{Renderer: "markdown-it", Scale: 1, CookieName: "chatstand_tp", SignedIn: "demo", ThirdParty: "http://" + hang.Addr().String()})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tp.Close() }()
	keys := testkit.StandinMarkdownSite(stand.URL())
	quietKeys := keys[:strings.Index(keys, "    done:")]
	y := fmt.Sprintf(`spool: %q
settle: 50ms
maxRetries: 0
http: "off"
web: {profiles: %q, instance: bench, taskTimeout: 2m}
models:
  - {name: proof, kind: web, site: standin-md, account: demo, needEmptyPrompt: true}
  - {name: quiet, kind: web, site: quiet, account: demo, needEmptyPrompt: true}
  - {name: nocheck, kind: web, site: nocheck, account: demo, needEmptyPrompt: true}
  - {name: thirdparty, kind: web, site: thirdparty, account: demo, needEmptyPrompt: true}
sites:
%s%s%s    verify: off
%s`, filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), keys, strings.Replace(quietKeys, "  standin-md:", "  quiet:", 1),
		strings.TrimRight(strings.Replace(keys, "  standin-md:", "  nocheck:", 1), "\n")+"\n",
		strings.Replace(testkit.StandinMarkdownSite(tp.URL()), "  standin-md:", "  thirdparty:", 1))
	cfg, err := config.ParseConfig([]byte(y))
	if err != nil {
		return nil, err
	}
	// (tp signs every visitor in as demo: its login page would wait
	// for the load the third party holds.)
	if err := signIn(ctx, cfg, stand.URL()); err != nil {
		return nil, fmt.Errorf("sign the profile in: %w", err)
	}
	const perSite = 8
	// Answers of about 2 s each ([[duration=2s]] at scale 1), from the
	// corpus; the two sites take turns.
	corpus := chatstand.Corpus()
	var drops []taskfile.Task
	for i := range perSite {
		for _, m := range benchModels {
			id := fmt.Sprintf("%s-%02d", m, i)
			drops = append(drops, taskfile.Task{TaskID: id, Model: m, Content: fmt.Sprintf("[[md=%s]] [[duration=2s]] %s", corpus[i%len(corpus)], id)})
		}
	}
	fmt.Fprintf(stderr, "bench: web answer end: %d tasks through a real browser ...\n", len(drops))
	store := spool.NewStore(cfg, nil)
	tasks, finals, err := runWebTasks(ctx, store, browser.NewExecutor(cfg, slog.New(slog.DiscardHandler)), drops, 10*time.Minute)
	if err != nil {
		return nil, err
	}
	turns := map[string]chatstand.Turn{}
	for _, c := range append(stand.Conversations("demo"), tp.Conversations("demo")...) {
		for _, t := range c.Turns {
			turns[t.Content] = t
		}
	}
	var checks []time.Duration // each checked task's comparisons
	lat := map[string][]time.Duration{}
	cost := map[string][]time.Duration{}
	for id, fin := range finals {
		t := tasks[id]
		if t.State != taskfile.StateSuccess {
			return nil, fmt.Errorf("task %s: %s: %s", id, t.State, t.Error)
		}
		turn, ok := turns[t.Content]
		if !ok || turn.DoneSent.IsZero() {
			return nil, fmt.Errorf("task %s: the stand-in has no ended turn for it", id)
		}
		m := t.Model
		lat[m] = append(lat[m], fin.Sub(turn.DoneSent))
		cost[m] = append(cost[m], fin.Sub(t.StartedAt)-2*time.Second)
		if m == "proof" {
			took, err := checkTook(store.Layout.LogPath(taskfile.KindWeb, id))
			if err != nil {
				return nil, fmt.Errorf("task %s: %w", id, err)
			}
			checks = append(checks, took)
		}
	}
	med := func(ds []time.Duration) time.Duration { return pct(ds, 50) }
	p95 := func(ds []time.Duration) time.Duration { return pct(ds, 95) }
	ratio := func(a, b time.Duration) float64 {
		if b <= 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	return []coreFigure{
		{Name: "answer end → result", Value: ms(med(lat["proof"])), Unit: "ms", Baseline: ms(med(lat["quiet"])), BaseUnit: "ms", Ratio: ratio(med(lat["proof"]), med(lat["quiet"])),
			Note: fmt.Sprintf("median of %d, stream's [DONE] written → final durable write, real Chromium; proof (network end, done bar) vs quiet alone (1 s) on the same page; p95 %.0f ms vs %.0f ms", perSite, ms(p95(lat["proof"])), ms(p95(lat["quiet"])))},
		{Name: "web cost beyond ans.", Value: ms(med(cost["proof"])), Unit: "ms", Baseline: ms(med(cost["quiet"])), BaseUnit: "ms", Ratio: ratio(med(cost["proof"]), med(cost["quiet"])),
			Note: "median per task: claim → final write less the answer's 2 s of streaming (launch or the warm browser, load, type, end, write); proof vs quiet alone"},
		{Name: "result check", Value: ms(med(checks)), Unit: "ms", Baseline: ms(med(lat["nocheck"])), BaseUnit: "ms", Ratio: ratio(med(lat["proof"]), med(lat["nocheck"])),
			Note: fmt.Sprintf("median per task of the comparisons with the page (task log's checkTook; p95 %.1f ms; target ≤ 20 ms); ratio: answer end → result checked vs verify: off on the same page, %.0f vs %.0f ms", ms(p95(checks)), ms(med(lat["proof"])), ms(med(lat["nocheck"])))},
		{Name: "hung 3rd party cost", Value: ms(med(cost["thirdparty"])), Unit: "ms", Baseline: ms(med(cost["proof"])), BaseUnit: "ms", Ratio: ratio(med(cost["thirdparty"]), med(cost["proof"])),
			Note: fmt.Sprintf("median per task beyond the answer's 2 s, the page with a third-party script, frame and pixel that never answer vs the same page without (issue 55: target under 2000 ms); p95 %.0f ms", ms(p95(cost["thirdparty"])))},
	}, nil
}

// hangingOrigin is a server that takes every request and never answers
// it (until closed): a third party the firewall swallows.
func hangingOrigin() (*hangServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hangServer{ln: ln, stop: make(chan struct{})}
	h.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-h.stop:
		case <-r.Context().Done():
		}
	})}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

type hangServer struct {
	ln   net.Listener
	srv  *http.Server
	stop chan struct{}
}

func (h *hangServer) Addr() net.Addr { return h.ln.Addr() }

func (h *hangServer) Close() {
	close(h.stop)
	_ = h.srv.Close()
}

// benchModels take turns on the stand-in's page: proof (its positive
// signals, every result checked against the page), quiet (quiet alone),
// nocheck (proof with verify: off) and thirdparty (proof on the page with
// a third party that never answers).
var benchModels = []string{"proof", "quiet", "nocheck", "thirdparty"}

var checkTookRE = regexp.MustCompile(`msg="driver: answer finished".* checkTook=(\S+)`)

// checkTook is the time a task's result check took, from its log.
func checkTook(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	m := checkTookRE.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("%s: no checkTook in the answer's step line", path)
	}
	return time.ParseDuration(string(m[1]))
}

// pct is the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

// signIn signs the bench's profile in to the stand-in, as `spoolgate
// login` would: a browser on the profile opens the login link.
func signIn(ctx context.Context, cfg *config.Config, url string) error {
	prof := browser.ProfileDir(cfg)
	if err := os.MkdirAll(prof, 0o700); err != nil {
		return err
	}
	b, err := browser.Launch(ctx, cfg, prof, true, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer b.Close()
	lctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	return chromedp.Do(lctx, chromedp.Navigate(url+"login?user=demo"))
}

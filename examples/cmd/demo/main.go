// Command demo is `make demo`: the field report's 40-task batch, for real.
// It starts the OpenAI-compatible stand-in and the chat-page stand-in on
// 127.0.0.1, writes a fresh ./demo with a config made from
// examples/demo.yaml with two web sessions (accounts demo and demo2; -sessions
// N), signs each account in on its own browser profile through the
// stand-in's /login, runs `bin/spoolgate run`,
// drops 12 web and 28 API tasks with `bin/spoolgate submit` (durations drawn
// with a fixed seed from the field report's ranges, time-scaled), shows
// each lane's progress and ETA from `bin/spoolgate status --json`, prints a
// summary beside the lower bound, stops the daemon with SIGTERM and checks
// that no browser of the demo profile is left. It exits 1 if any task is
// lost or failed, or a process is left behind.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// marker marks a folder the demo made, so a rerun may remove it.
const marker = ".spoolgate-demo"

// batchName labels the demo's tasks.
const batchName = "field-report"

type options struct {
	scale    float64
	seed     uint64
	dir      string
	bin      string
	template string
	timeout  time.Duration
	nWeb     int
	nAPI     int
	editor   string
	renderer string
	sessions int
}

func main() {
	var o options
	flag.Float64Var(&o.scale, "scale", 1.0/60, "time scale of the stand-ins (1/60: a 6-minute answer takes 6 s)")
	flag.Uint64Var(&o.seed, "seed", bench.DefaultSeed, "seed of the tasks' durations and order")
	flag.StringVar(&o.dir, "dir", "demo", "the demo's folder (removed and made afresh)")
	flag.StringVar(&o.bin, "bin", filepath.Join("bin", "spoolgate"), "the spoolgate binary (make builds it)")
	flag.StringVar(&o.template, "config", filepath.Join("examples", "demo.yaml"), "the config template")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up if the batch has not finished by then")
	flag.IntVar(&o.nWeb, "web", bench.FieldWeb, "web tasks")
	flag.IntVar(&o.nAPI, "api", bench.FieldAPI, "API tasks")
	flag.StringVar(&o.editor, "editor", "textarea", "the chat page's message field: textarea, contenteditable, or a real editor from npm: prosemirror, lexical, quill (see examples/site-editor.yaml)")
	flag.StringVar(&o.renderer, "renderer", "markdown-it", "the chat page's Markdown renderer: markdown-it, marked, react-markdown, plain, or \"\" for the old plain-text page (see examples/chatstand/README.md)")
	flag.IntVar(&o.sessions, "sessions", 2, "web sessions: accounts demo, demo2, ... of the stand-in, each on its own profile, one task at a time each")
	flag.Parse()
	if o.scale <= 0 || o.scale > 1 {
		fmt.Fprintln(os.Stderr, "demo: -scale must be in (0, 1]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errNeedChromium) {
			fmt.Fprintln(os.Stderr, "demo: FAILED:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	if _, err := ensureChromium(stdout, stderr); err != nil {
		return err
	}
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing: build it with `make build` (make demo does)", o.bin)
	}
	dir, err := freshDir(o.dir)
	if err != nil {
		return err
	}

	// The two stand-ins, in this process, on 127.0.0.1.
	key := randomHex(16)
	api, err := apistand.Start(apistand.Options{Quota: 5, Scale: o.scale, RequireKey: key})
	if err != nil {
		return err
	}
	defer api.Close()
	co := chatstand.Options{Scale: o.scale, Input: o.editor, Renderer: o.renderer}
	if o.renderer != "" {
		co.Reasoning = chatstand.ReasoningField // a reasoning page: the demo's web model thinks before it answers
	}
	chat, err := chatstand.Start(co)
	if err != nil {
		return err
	}
	defer chat.Close()

	chatURL := chat.URL()
	if o.renderer != "" {
		chatURL += "?deep=1" // 深度思考 on: each answer's thinking streams first and is kept in `reasoning`
	}
	cfgPath, cfg, err := writeConfig(o.template, dir, api.URL(), chatURL, o.sessions, o.renderer != "")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: stand-ins: API %s (quota 5, key required), chat page %s (message field: %s, answers: %s); time scale 1/%.0f\n", api.URL(), chat.URL(), o.editor, answersOf(o.renderer), 1/o.scale)
	fmt.Fprintf(stdout, "demo: config %s, spool %s, status page http://%s/\n", cfgPath, cfg.Spool, cfg.HTTP)

	sessions := cfg.WebSessions()
	fmt.Fprintf(stdout, "demo: %d web sessions, one task at a time each; signing each account in on its own profile (headless Chromium, the stand-in's /login)\n", len(sessions))
	for _, s := range sessions {
		fmt.Fprintf(stdout, "      account %s: profile %s, lock %s\n", s.Account, s.Profile, s.Lock)
		if err := login(ctx, cfg, s.Profile, chat.URL(), s.Account); err != nil {
			return fmt.Errorf("login %s: %w", s.Account, err)
		}
	}

	d, err := startDaemon(ctx, bin, cfgPath, filepath.Join(dir, "daemon.log"), key, cfg.HTTP)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = d.stop(cfg.ShutdownGrace.D() + 10*time.Second)
		}
	}()
	fmt.Fprintf(stdout, "demo: daemon running: %s run --config %s (pid %d, log %s)\n", o.bin, cfgPath, d.cmd.Process.Pid, d.logPath)

	tasks := bench.Workload(o.seed, o.nWeb, o.nAPI)
	contents := taskContents(tasks, o.renderer != "")
	ids, err := submit(ctx, bin, cfgPath, dir, tasks, contents)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo: submitted %d web + %d API tasks (batch %s); watch it from another terminal too:\n",
		bench.Count(tasks, taskfile.KindWeb), bench.Count(tasks, taskfile.KindAPI), batchName)
	fmt.Fprintf(stdout, "      %s status --watch --config %s\n\n", o.bin, cfgPath)

	watchErr := watch(ctx, o, bin, cfgPath, d, len(tasks), stdout)

	sum, sumErr := summarize(ctx, bin, cfgPath, cfg.Spool, tasks, ids, cfg.API.Concurrency, len(sessions), o.scale)
	if sum != nil {
		sum.perAccount, sum.total = chat.MaxPerAccount(), chat.MaxTotal()
		sum.modern = o.renderer != ""
		if o.renderer != "" {
			// One web result beside the Markdown the chat page streamed.
			sum.sampleID = sampleWeb(tasks)
			sum.sampleWant = chatstand.MarkdownFor(contents[sum.sampleID])
			sum.sampleThink = chatstand.ThinkingFor(contents[sum.sampleID], chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3})
		}
	}
	stopped = true
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "demo: stopping the daemon (SIGTERM)")
	stopErr := d.stop(cfg.ShutdownGrace.D() + 10*time.Second)
	var left []string
	for _, s := range sessions {
		left = append(left, leftovers(s.Profile, 10*time.Second)...)
	}

	if sumErr == nil {
		sum.print(stdout)
	}
	var problems []string
	// The batch as a picture: the status page's timeline, as a file, named
	// last of all.
	var tlLine string
	svg := filepath.Join(dir, "timeline.svg")
	if out, err := exec.CommandContext(ctx, bin, "status", "--config", cfgPath, "--timeline", svg, "--batch", batchName).CombinedOutput(); err != nil {
		problems = append(problems, fmt.Sprintf("status --timeline: %v: %s", err, strings.TrimSpace(string(out))))
	} else {
		rel := svg
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, svg); err == nil && !strings.HasPrefix(r, "..") {
				rel = r
			}
		}
		tlLine = fmt.Sprintf("demo: the batch's timeline, one row per API slot and web session, each attempt a bar: %s (open it in a browser)\n", rel)
	}
	if watchErr != nil {
		problems = append(problems, watchErr.Error())
	}
	if sumErr != nil {
		problems = append(problems, "summary: "+sumErr.Error())
	} else {
		if sum.lost > 0 {
			problems = append(problems, fmt.Sprintf("%d tasks lost (no final state)", sum.lost))
		}
		if sum.failed > 0 {
			problems = append(problems, fmt.Sprintf("%d tasks failed", sum.failed))
		}
	}
	if stopErr != nil {
		problems = append(problems, "daemon stop: "+stopErr.Error())
	} else {
		fmt.Fprintln(stdout, "demo: daemon stopped cleanly (exit 0)")
	}
	if len(left) > 0 {
		problems = append(problems, fmt.Sprintf("processes of the demo profile left behind: %s", strings.Join(left, "; ")))
	} else {
		for _, s := range sessions {
			fmt.Fprintf(stdout, "demo: no process of the demo profile remains (pgrep -f %s)\n", s.Profile)
		}
	}
	if len(problems) > 0 {
		fmt.Fprint(stdout, tlLine)
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Fprintf(stdout, "demo: OK. Results: %s results --config %s\n", o.bin, cfgPath)
	fmt.Fprint(stdout, tlLine)
	return nil
}

// freshDir removes a previous demo folder (only one the demo made) and
// makes it anew; it returns the absolute path.
func freshDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err == nil {
		if _, err := os.Stat(filepath.Join(abs, marker)); err != nil {
			return "", fmt.Errorf("%s exists and was not made by the demo (no %s in it): move it away or pass -dir", abs, marker)
		}
		if err := os.RemoveAll(abs); err != nil {
			return "", fmt.Errorf("remove the previous demo: %w", err)
		}
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", err
	}
	return abs, os.WriteFile(filepath.Join(abs, marker), []byte("made by make demo; removed by the next one\n"), 0o644)
}

// writeConfig fills the template's placeholders and writes
// <dir>/spoolgate.yaml, then loads it as the daemon will.
// modernKeys are the demo site's keys for the chat stand-in's Markdown
// page, as examples/site-standin.yaml's standin-md has them: the answer
// read from the page's own SSE response (else its copy button, else its
// HTML as Markdown), ended by the response's end or the action bar, and
// the conversation URL kept so a cut-off attempt reattaches.
const modernKeys = `    done: "[aria-label='Message actions']"
    copy: "[aria-label='Message actions'] [aria-label='Copy']"
    errorTurn: "[role=alert]"
    chrome: [":has(> [aria-label='Copy code'])"]
    network: {url: /api/conversation, format: sse, path: delta, reasoning: reasoning}
    conversation: "/c/[^/?#]+"
    userMessage: "[data-message-author-role='user']"
    history: "nav[aria-label='Chat history'] a[href^='/c/']"
    notFound: "[role=alert]:has(~ #log)"
`

func writeConfig(template, dir, apiURL, chatURL string, sessions int, modern bool) (string, *config.Config, error) {
	tmpl, err := os.ReadFile(template)
	if err != nil {
		return "", nil, fmt.Errorf("config template: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	r := strings.NewReplacer(
		"${SPOOL}", yamlQuote(filepath.Join(dir, "spool")),
		"${PROFILES}", yamlQuote(filepath.Join(dir, "profiles")),
		"${HTTP}", yamlQuote(fmt.Sprintf("127.0.0.1:%d", port)),
		"${API_URL}", yamlQuote(apiURL),
		"${CHAT_URL}", yamlQuote(chatURL),
		"${ACCOUNTS}", demoAccounts(sessions),
		"${MODERN}", map[bool]string{true: modernKeys, false: "    # (the plain-text page: none)\n"}[modern],
	)
	out := r.Replace(string(tmpl))
	if m := placeholder.FindString(out); m != "" {
		return "", nil, fmt.Errorf("config template %s: unknown placeholder %s", template, m)
	}
	path := filepath.Join(dir, "spoolgate.yaml")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return "", nil, err
	}
	cfg, err := config.LoadConfig(path)
	if err != nil {
		return "", nil, err
	}
	return path, cfg, nil
}

// demoAccounts is the accounts: entries of n web sessions: demo, demo2...
func demoAccounts(n int) string {
	var b strings.Builder
	for i := range max(n, 1) {
		name := "demo"
		if i > 0 {
			name = fmt.Sprintf("demo%d", i+1)
		}
		fmt.Fprintf(&b, "  %s: {site: standin}\n", name)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var placeholder = regexp.MustCompile(`\$\{[A-Z_]+\}`)

func yamlQuote(s string) string { return fmt.Sprintf("%q", s) }

// freePort asks the system for a free port on 127.0.0.1. Another program
// could take it before the daemon does; the daemon then warns and runs
// without its status page, and the demo still works.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// taskContents is each task's content by id; with markdown, each web task
// asks the chat stand-in for one of its Markdown answers.
func taskContents(tasks []bench.Task, markdown bool) map[string]string {
	corpus := chatstand.Corpus()
	out := map[string]string{}
	for i, t := range tasks {
		out[t.ID] = t.Content()
		if t.Kind == taskfile.KindWeb && markdown {
			out[t.ID] += fmt.Sprintf(" [[md=%s]]", corpus[i%len(corpus)])
		}
	}
	return out
}

// submit writes each task as a file under <dir>/tasks and drops them all
// with one `spoolgate submit`; it returns the taskIds it printed.
func submit(ctx context.Context, bin, cfgPath, dir string, tasks []bench.Task, contents map[string]string) ([]string, error) {
	tdir := filepath.Join(dir, "tasks")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return nil, err
	}
	args := []string{"submit", "--config", cfgPath}
	for _, t := range tasks {
		model := "writer"
		if t.Kind == taskfile.KindWeb {
			model = "thinker-web"
		}
		st := &taskfile.Task{TaskID: t.ID, Model: model, Content: contents[t.ID], Batch: batchName,
			Output: batchName + "/" + t.ID + ".txt"}
		data, err := st.Encode()
		if err != nil {
			return nil, err
		}
		p := filepath.Join(tdir, t.ID+".yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		args = append(args, p)
	}
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("spoolgate submit: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("spoolgate submit: %w", err)
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(tasks) {
		return nil, fmt.Errorf("spoolgate submit printed %d taskIds for %d tasks: %q", len(ids), len(tasks), out)
	}
	return ids, nil
}

// watch shows progress until the batch is finished, the daemon exits, the
// timeout passes or ctx ends.
func watch(ctx context.Context, o options, bin, cfgPath string, d *daemon, total int, stdout io.Writer) error {
	p := newProgress(stdout, time.Now())
	deadline := time.After(o.timeout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		st, err := snapshot(ctx, bin, cfgPath)
		if err == nil {
			finished := false
			for _, b := range st.Batches {
				if b.Batch == batchName && b.Counts.Finished() == total {
					finished = true
				}
			}
			p.show(st, finished)
			if finished {
				return nil
			}
		} else if ctx.Err() == nil {
			fmt.Fprintln(stdout, "demo: status:", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted")
		case <-d.exited:
			return fmt.Errorf("the daemon exited while the batch ran (%v); its log:\n%s", d.err, tail(d.logPath, 20))
		case <-deadline:
			return fmt.Errorf("the batch did not finish within %s", o.timeout)
		case <-tick.C:
		}
	}
}

// answersOf names the chat page's answers for the demo's first lines.
func answersOf(renderer string) string {
	if renderer == "" {
		return "plain text"
	}
	return "Markdown over SSE, rendered by " + renderer
}

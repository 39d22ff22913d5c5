package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

func init() {
	register("site", "site new NAME --url URL: start a site from its page, its selectors proposed", cmdSite)
}

// lockSession takes the session's web-runner lock for login, check and
// site new, so no task runs on the profile meanwhile. A held lock's error
// names its holder and ends with advice: pauseOrStop for a command that
// can wait for the lane's task, stopDaemon for login (whose window stays
// open as long as the operator needs).
func lockSession(cmd string, cfg *config.Config, sess config.WebSession, advice string) (unlock func(), err error) {
	lock := spool.OpenRunnerLock(sess.Lock)
	if err := lock.TryLock(cfg.Host); err != nil {
		if errors.Is(err, spool.ErrLockHeld) {
			return nil, fmt.Errorf("%s: the web profile is in use: %s is held by %s (a running spoolgate daemon holds it for its web lane); %s", cmd, lock.Path(), lock.Holder(), advice)
		}
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return func() { lock.Unlock() }, nil
}

// The advice at the end of a held lock's error.
const (
	pauseOrStop = "pause the web lane and wait for its task, or stop the daemon, then retry"
	stopDaemon  = "stop that daemon, then retry"
)

// signInWait is how long a --show window waits for the operator to sign
// in before a page with no message field counts as having none.
const signInWait = 5 * time.Minute

// suggestFlags are the flags `check --suggest` and `site new` share.
type suggestFlags struct {
	show    bool
	send    string
	probe   bool // send browser.DefaultProbe when send is empty
	picture bool // also send browser.PictureProbe: propose artifactsFrom
	write   bool
	account string
}

// cmdSite: spoolgate site new NAME --url URL [--send TEXT] [--write].
func cmdSite(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "new" {
		return usagef("site: want `site new NAME --url URL`")
	}
	var c common
	var sf suggestFlags
	fs := newFlags("site new", &c)
	url := fs.String("url", "", "the chat page's address (signed in: `spoolgate login NAME` first if it needs an account)")
	fs.BoolVar(&sf.show, "show", false, "a visible browser window instead of headless")
	fs.StringVar(&sf.send, "send", "", "send this one probe message to find the answer, busy, done and copy keys")
	fs.BoolVar(&sf.probe, "probe", false, "send the default probe (a short Markdown document asked for), as --send would")
	fs.BoolVar(&sf.picture, "picture", false, "with --send or --probe: also ask for a picture, to propose artifactsFrom (where the site keeps generated files)")
	fs.BoolVar(&sf.write, "write", false, "add the site to the config file (comments kept, a .bak beside it)")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 || *url == "" {
		return usagef("site new: want NAME and --url URL")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	name := pos[0]
	if _, ok := cfg.Sites[name]; ok {
		return usagef("site new: site %q is already in the config: `spoolgate check %s --suggest` proposes new selectors for it", name, name)
	}
	return runSuggest(ctx, env, cfg, "site new", name, config.SiteConfig{URL: *url}, sf)
}

// runSuggest opens the page under the session's lock (as check does),
// prints the suggestions and the ready-to-paste block, and with --write
// puts the block into the config file.
func runSuggest(ctx context.Context, env *Env, cfg *config.Config, cmd, name string, sc config.SiteConfig, sf suggestFlags) error {
	sess, err := webSessionFor(cfg, cmd, name, sf.account)
	if err != nil {
		return err
	}
	unlock, err := lockSession(cmd, cfg, sess, pauseOrStop)
	if err != nil {
		return err
	}
	defer unlock()
	if sf.send == "" && sf.probe {
		sf.send = browser.DefaultProbe
	}
	if sf.picture && sf.send == "" {
		return usagef("%s: --picture goes with --send or --probe", cmd)
	}
	opts := browser.SuggestOptions{Show: sf.show, Send: sf.send, Profile: sess.Profile, Picture: sf.picture}
	if sf.show {
		// A window: the operator may sign in first (a new site cannot be
		// given to `login` before it has its keys).
		opts.Timings = browser.Timings{PageLoad: signInWait + time.Minute, InputGrace: signInWait}
		fmt.Fprintf(env.Stdout, "If the page asks you to sign in, do it in the window: the proposal starts once a message field shows (within %s).\n", signInWait)
	}
	rep, err := browser.Suggest(ctx, cfg, name, sc, opts)
	if err != nil {
		return fmt.Errorf("%s %s: %w", cmd, name, err)
	}
	printSuggestions(env.Stdout, rep)
	doc, src, err := readConfigDoc(cfg.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	site := applySuggestions(doc, name, sc, rep)
	block, err := siteBlock(name, site)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	fmt.Fprintf(env.Stdout, "\n# paste under the config's sites: (or run with --write)\n%s", block)
	for _, p := range rep.Problems {
		fmt.Fprintf(env.Stderr, "spoolgate: %s %s: %s\n", cmd, safetext.Line(name), safetext.Line(p))
	}
	if sf.write {
		if cfg.Path == "" {
			return fmt.Errorf("%s: --write: no config file (give --config FILE): the block is above", cmd)
		}
		if err := writeConfigDoc(cfg.Path, src, doc); err != nil {
			return fmt.Errorf("%s: --write: %w; the block is above: paste it under sites: by hand", cmd, err)
		}
		fmt.Fprintf(env.Stdout, "wrote %s (the old one is %s.bak)\n", cfg.Path, cfg.Path)
	}
	if !suggestComplete(rep, sf.send != "") {
		return &exitErr{code: 1}
	}
	return nil
}

// suggestComplete: the keys a task needs were found (input and send; the
// answer too when a probe was sent).
func suggestComplete(rep *browser.SuggestReport, probed bool) bool {
	need := []string{"input", "send"}
	if probed {
		need = append(need, "answer")
	}
	for _, k := range need {
		if s, _ := rep.Get(k); s.Selector == "" {
			return false
		}
	}
	return true
}

// printSuggestions prints the proposal; what the page gave (selectors
// made of its classes and attributes, the reasons quoting its text) is
// escaped as status's output is.
func printSuggestions(w io.Writer, rep *browser.SuggestReport) {
	line := safetext.Line
	fmt.Fprintf(w, "site %s  %s\n", line(rep.Site), line(rep.URL))
	for _, k := range rep.Keys {
		if k.Selector == "" {
			fmt.Fprintf(w, "  %-8s not found: %s\n", k.Key, line(k.Why))
			continue
		}
		cur := ""
		switch k.Current {
		case "":
		case browser.CurrentPasses:
			cur = " (the config's selector passes the probe: --write keeps it)"
		default:
			cur = " (the config's selector: " + k.Current + ")"
		}
		fmt.Fprintf(w, "  %-8s %s  [%s] %s\n", k.Key, line(k.Selector), k.Confidence, line(k.Why+cur))
		for _, o := range k.Others {
			fmt.Fprintf(w, "           or %s (%d)\n", line(o.Selector), o.Score)
		}
	}
	if rep.Probe != "" {
		fmt.Fprintf(w, "probe %q answered: %q\n", rep.Probe, rep.Answer)
	}
	if rep.Second != "" {
		fmt.Fprintf(w, "second probe %s\n", line(rep.Second))
	}
}

// blockKeys are the site keys a suggestion may set, in the block's order.
var blockKeys = []string{"input", "send", "answer", "thinking", "network", "busy", "done", "copy", "newChat", "error", "quiet", "artifactsFrom"}

// applySuggestions puts the suggestions into doc's sites.NAME (made if
// missing) and returns that mapping. A key is set when the config has
// none, or its selector no longer finds what was found; a key whose
// selector still does is kept. Keys the config cannot take yet (see
// browser.SiteKeyKnown) stay out. Every other key and every comment is
// left as it was.
func applySuggestions(doc *yaml.Node, name string, sc config.SiteConfig, rep *browser.SuggestReport) *yaml.Node {
	root := doc.Content[0]
	sites := mapGet(root, "sites", yaml.MappingNode)
	site := mapGet(sites, name, yaml.MappingNode)
	if u := mapLookup(site, "url"); u == nil {
		v := mapGet(site, "url", yaml.ScalarNode)
		v.Value, v.Style = sc.URL, yaml.DoubleQuotedStyle
	}
	for _, key := range blockKeys {
		s, ok := rep.Get(key)
		if !ok || s.Selector == "" || !browser.SiteKeyKnown(key) || !safeValue(s) {
			continue
		}
		old := mapLookup(site, key)
		if key == "quiet" && old != nil && longerQuiet(old.Value, s.Selector) {
			continue
		}
		if old != nil && old.Value != "" && s.Current == "ok" {
			old.LineComment = clip("still finds it (suggested: "+s.Selector+")", 200)
			continue
		}
		if old != nil && old.Value != "" && s.Current == browser.CurrentPasses {
			// The probe judged the config's own selector and it worked:
			// never traded for a proposal.
			old.LineComment = clip("passes the probe, kept (suggested: "+s.Selector+")", 200)
			continue
		}
		if key == "network" {
			if old == nil || s.Current != "ok" {
				setNetwork(site, s)
			}
			continue
		}
		if key == "artifactsFrom" {
			if old == nil || len(old.Content) == 0 { // an operator's own list is never replaced
				setList(site, key, s)
			}
			continue
		}
		v := mapGet(site, key, yaml.ScalarNode)
		v.Value, v.Style, v.Tag = s.Selector, yaml.DoubleQuotedStyle, "!!str"
		if key == "quiet" {
			v.Style = 0 // a duration, not a selector
		}
		v.LineComment = clip(s.Confidence+": "+s.Why, 140)
	}
	return site
}

// setNetwork sets the site's network key to the suggested response, as
// one flow mapping with its reason beside it.
func setNetwork(site *yaml.Node, s browser.Suggestion) {
	n := s.Network
	str := func(v string, style yaml.Style) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: "!!str", Style: style}
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	add := func(k, v string, style yaml.Style) {
		if v != "" {
			m.Content = append(m.Content, str(k, 0), str(v, style))
		}
	}
	add("url", n.URL, yaml.DoubleQuotedStyle)
	add("protocol", n.Protocol, 0) // a named protocol stands for the keys below
	add("format", n.Format, 0)
	add("path", n.Path, 0)
	add("mode", n.Mode, 0)
	add("reasoning", n.Reasoning, 0)
	m.LineComment = clip(s.Confidence+": "+s.Why, 140)
	*mapGet(site, "network", yaml.MappingNode) = *m
}

// setList sets a list key (artifactsFrom) as one flow sequence with its
// reason beside it.
func setList(site *yaml.Node, key string, s browser.Suggestion) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, v := range s.List {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: "!!str"})
	}
	seq.LineComment = clip(s.Confidence+": "+s.Why, 140)
	*mapGet(site, key, yaml.SequenceNode) = *seq
}

// safeValue: every value a suggestion would write is free of what
// safetext escapes (controls, bidi overrides, line separators): yaml.v3
// quotes controls but writes a bidi override as itself, and a selector
// that needs one is no selector a person could check by eye. Such a
// suggestion is printed, escaped, and never written.
func safeValue(s browser.Suggestion) bool {
	vs := append([]string{s.Selector}, s.List...)
	if n := s.Network; n != nil {
		vs = append(vs, n.Protocol, n.URL, n.Format, n.Path, n.Mode, n.Reasoning)
	}
	for _, v := range vs {
		if safetext.Line(v) != v {
			return false
		}
	}
	return true
}

// longerQuiet: the config's quiet is already at least the suggested one.
func longerQuiet(have, want string) bool {
	h, err1 := config.ParseDuration(have)
	w, err2 := config.ParseDuration(want)
	return err1 == nil && err2 == nil && h >= w
}

// clip is s on one line, its runs of spaces and line breaks made one
// space, escaped as status's output is (a comment is written as it is:
// a page's ESC or BEL would reach whoever views the config), in at most n
// characters.
func clip(s string, n int) string {
	return safetext.ClipRunes(safetext.Line(strings.Join(strings.Fields(s), " ")), n)
}

// mapLookup returns the value of key in mapping m, or nil.
func mapLookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mapGet returns the value of key in mapping m, adding it (of kind) when
// missing; a null value becomes an empty node of kind.
func mapGet(m *yaml.Node, key string, kind yaml.Kind) *yaml.Node {
	if v := mapLookup(m, key); v != nil {
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" && kind != yaml.ScalarNode {
			v.Kind, v.Tag, v.Value = kind, "", ""
		}
		return v
	}
	v := &yaml.Node{Kind: kind}
	if kind == yaml.MappingNode {
		v.Tag = "!!map"
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

// readConfigDoc reads the config file as a YAML node tree (comments
// kept); no file, or an empty one, is an empty mapping.
func readConfigDoc(path string) (*yaml.Node, []byte, error) {
	var src []byte
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
		src = b
	}
	doc := &yaml.Node{}
	if len(bytes.TrimSpace(src)) > 0 {
		if err := yaml.Unmarshal(src, doc); err != nil {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, errors.New("the config is not a mapping of keys")
	}
	return doc, src, nil
}

// siteBlock is `sites:` with the one site, as YAML to paste.
func siteBlock(name string, site *yaml.Node) (string, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "sites"},
		{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: name}, site}},
	}}
	return encodeYAML(m)
}

func encodeYAML(n *yaml.Node) (string, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(n); err != nil {
		return "", err
	}
	if err := e.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// writeConfigDoc writes doc over path durably, the old content kept in
// path.bak first; the new content must load as a config, or nothing is
// written.
func writeConfigDoc(path string, old []byte, doc *yaml.Node) error {
	out, err := encodeYAML(doc)
	if err != nil {
		return err
	}
	if _, err := config.ParseConfig([]byte(out)); err != nil {
		return fmt.Errorf("the updated config would not load (%w); nothing written", err)
	}
	if err := checkWritable(path); err != nil {
		return err
	}
	if old != nil {
		if err := fsx.WriteFileAtomic(path+".bak", old); err != nil {
			return fmt.Errorf("keep the old config: %w", err)
		}
	}
	return fsx.WriteFileAtomic(path, []byte(out))
}

// checkWritable fails clearly when the config or its folder cannot be
// written: the rename needs the folder, an operator expects the file.
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s is read-only", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".sg-check-*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", filepath.Dir(path), errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

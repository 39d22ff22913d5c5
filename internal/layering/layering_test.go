package layering

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/spoolgate/spoolgate"

// rule constrains the module packages that pkg depends on, directly or
// not: only those in allow (when allow is non-nil), none in deny.
type rule struct {
	pkg   string
	allow []string // nil: any not denied
	deny  []string // a path, or a prefix ending in "/"
	why   string
}

// rules are the house's layers, read top to bottom: the command (cmd/)
// over the doors (doors/: the HTTP surfaces, the command line's code, the
// operator's actions and reports), over the lanes and the browser, over
// the Store (spool/) with the task format at its bottom, all on the
// foundation (internal/), which imports nothing of the module above it.
// A rule's pkg ending in "/" holds for the folder's package and every
// package under it.
var rules = []rule{
	{pkg: "internal/", allow: []string{"internal/"}, why: "the foundation (file primitives, seals, safe text, start/stop) imports nothing above it"},
	{pkg: "spool/", deny: []string{"doors/", "lanes", "lanes/", "browser", "browser/", "cmd/", "e2e/"}, why: "the Store's packages know nothing above them"},
	{pkg: "lanes/", deny: []string{"doors/", "cmd/", "e2e/"}, why: "the lanes run tasks; the doors above them show and take them"},
	{pkg: "browser/", deny: []string{"doors/", "cmd/", "e2e/"}, why: "the browser executor knows no door"},
	{pkg: "doors/", deny: []string{"cmd/", "e2e/"}, why: "the doors are the top library layer; the command only wires them"},
	{pkg: "spool/taskfile", allow: []string{}, why: "the task format is a leaf every layer may import"},
	{pkg: "spool/config", allow: []string{"spool/taskfile"}, why: "the config imports the task format only"},
	{pkg: "lanes/attempt", deny: []string{"spool"}, why: "the executor contract does not need the Store"},
	{pkg: "lanes/apimodel", deny: []string{"spool"}, why: "the API executor needs the task and the config, not the Store"},
	{pkg: "doors/tableimport", allow: []string{}, why: "a table is read without the spool: it imports no package of this module"},
	{pkg: "doors/actions", deny: []string{"lanes", "lanes/", "browser", "browser/", "cmd/", "doors/console"}, why: "the operator's actions are the Store's calls, shared by the command line and the console"},
	{pkg: "spool", deny: []string{"spool/status", "lanes", "lanes/", "browser", "browser/", "cmd/"}, why: "the Store knows nothing above it"},
	{pkg: "internal/fsx", allow: []string{"internal/dirsync"}, why: "the file primitives know no task, no config, no Store"},
	{pkg: "browser", deny: []string{"spool", "spool/status"}, why: "the browser saves through its job and reads liveness from fsx, not through the Store"},
	{pkg: "lanes", deny: []string{"spool/status"}, why: "the lanes fill the live views of the leaf of shared types; status shows them"},
}

func matches(p, pattern string) bool {
	if strings.HasSuffix(pattern, "/") {
		return strings.HasPrefix(p, pattern)
	}
	return p == pattern
}

// violations checks rules against deps: a package (module-relative path)
// to every module package it depends on.
func violations(rules []rule, deps map[string][]string) []string {
	var out []string
	pkgs := slices.Sorted(maps.Keys(deps))
	for _, r := range rules {
		seen := false
		for _, pkg := range pkgs {
			if !matches(pkg, r.pkg) && pkg+"/" != r.pkg {
				continue
			}
			seen = true
			for _, d := range deps[pkg] {
				bad := r.allow != nil && !slices.ContainsFunc(r.allow, func(a string) bool { return matches(d, a) })
				for _, p := range r.deny {
					bad = bad || matches(d, p)
				}
				if bad {
					out = append(out, fmt.Sprintf("%s depends on %s: %s", pkg, d, r.why))
				}
			}
		}
		if !seen {
			out = append(out, fmt.Sprintf("%s: not in the module", r.pkg))
		}
	}
	return out
}

// moduleDeps lists, with go list, each module package's module
// dependencies (transitive, test files not included) for goos; overlay,
// if not "", is a go list -overlay file.
func moduleDeps(t *testing.T, goos, overlay string) map[string][]string {
	t.Helper()
	args := []string{"list", "-e", "-json=ImportPath,Deps,Error"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, module+"/...")...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Deps       []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		deps[rel] = []string{}
		for _, d := range p.Deps {
			if r, ok := strings.CutPrefix(d, module+"/"); ok {
				deps[rel] = append(deps[rel], r)
			}
		}
	}
	return deps
}

func TestImportRules(t *testing.T) {
	for _, goos := range []string{"linux", "windows", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			for _, v := range violations(rules, moduleDeps(t, goos, "")) {
				t.Error(v)
			}
		})
	}
}

// TestViolations: each rule catches a bad dependency in a made-up graph,
// and passes the good one.
func TestViolations(t *testing.T) {
	good := map[string][]string{
		"spool/taskfile":    {},
		"spool/config":      {"spool/taskfile"},
		"lanes/attempt":     {"spool/taskfile", "spool/config"},
		"lanes/apimodel":    {"spool/taskfile", "spool/config", "lanes/attempt"},
		"spool":             {"spool/taskfile", "spool/config", "internal/startstop", "internal/fsx"},
		"internal/fsx":      {"internal/dirsync"},
		"browser":           {"spool/taskfile", "spool/config", "lanes/attempt", "internal/fsx"},
		"lanes":             {"spool", "spool/taskfile", "lanes/attempt"},
		"browser/generated": {"lanes/attempt", "internal/fsx"},
		"doors/tableimport": {},
		"doors/actions":     {"spool", "spool/taskfile", "spool/config", "doors/tableimport", "doors/report"},
	}
	if v := violations(rules, good); len(v) != 0 {
		t.Fatalf("the good graph: %v", v)
	}
	tests := []struct {
		pkg, dep string
	}{
		{"spool/taskfile", "internal/startstop"},
		{"spool/config", "spool"},
		{"spool/config", "internal/safetext"},
		{"lanes/apimodel", "spool"},
		{"lanes/attempt", "spool"},
		{"spool", "lanes"},
		{"spool", "lanes/notify"},
		{"spool", "browser"},
		{"spool", "cmd/spoolgate"},
		{"spool", "spool/status"},
		{"internal/fsx", "spool/taskfile"},
		{"internal/fsx", "spool"},
		{"browser", "spool"},
		{"browser", "spool/status"},
		{"lanes", "spool/status"},
		{"doors/tableimport", "spool/taskfile"},
		{"doors/actions", "doors/console"},
		{"doors/actions", "lanes"},
		{"internal/fsx", "doors/report"},
		{"spool", "doors/report"},
		{"lanes", "doors/actions"},
	}
	for _, tt := range tests {
		bad := map[string][]string{}
		for k, v := range good {
			bad[k] = slices.Clone(v)
		}
		bad[tt.pkg] = append(bad[tt.pkg], tt.dep)
		v := violations(rules, bad)
		if len(v) == 0 || slices.ContainsFunc(v, func(s string) bool { return !strings.HasPrefix(s, tt.pkg+" depends on "+tt.dep) }) {
			t.Errorf("%s importing %s: violations %q", tt.pkg, tt.dep, v)
		}
	}
}

// TestImportRules_Planted plants a bad import in the real module (a go
// list overlay adds a file to spool/taskfile that imports a module
// package) and checks the rules see it.
func TestImportRules_Planted(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "planted.go")
	plant := "package taskfile\n\nimport _ \"" + module + "/internal/startstop\"\n"
	if err := os.WriteFile(src, []byte(plant), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "spool", "taskfile", "zz_planted.go"): src}})
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	v := violations(rules, moduleDeps(t, "linux", overlay))
	want := "spool/taskfile depends on internal/startstop"
	if !slices.ContainsFunc(v, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Fatalf("planted import not caught: violations %q", v)
	}
}

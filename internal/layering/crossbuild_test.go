package layering

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// typeCheck type-checks, from source, the packages that pattern names and
// everything they import, as they build for goos on amd64 (cgo off, as in
// a cross build), and returns the problems: go list's package errors and
// the type checker's. It is the front end of `GOOS=goos go build`: a file
// missing for one OS, a call to a Unix-only function, an unused import or
// variable, a dependency that does not build there, all fail it; only the
// code generation and the link are left out, which is what makes a cross
// build cost 160-180 CPU seconds on a cold cache (it compiles the standard
// library and every dependency for that OS) and this one under 10.
// Standard library function bodies are not checked (they build for every
// OS Go supports); every other package's are. overlay, if not "", is a go
// list -overlay file, whose replacements are what gets parsed.
func typeCheck(t *testing.T, goos, overlay, pattern string) []string {
	t.Helper()
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,ImportMap,Standard,Error,DepsErrors"}
	replace := map[string]string{}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
		b, err := os.ReadFile(overlay)
		if err != nil {
			t.Fatal(err)
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &ov); err != nil {
			t.Fatal(err)
		}
		replace = ov.Replace
	}
	cmd := exec.Command("go", append(args, pattern)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v", goos, err)
	}
	type listErr struct{ Err string }
	var problems []string
	fset := token.NewFileSet()
	checked := map[string]*types.Package{"unsafe": types.Unsafe}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		// -deps lists every package after all it imports.
		var p struct {
			ImportPath        string
			Dir               string
			GoFiles, CgoFiles []string
			ImportMap         map[string]string
			Standard          bool
			Error             *listErr
			DepsErrors        []*listErr
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.ImportPath == "unsafe" {
			continue
		}
		if p.Error != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", p.ImportPath, p.Error.Err))
		}
		var files []*ast.File
		for _, name := range append(p.GoFiles, p.CgoFiles...) {
			path := filepath.Join(p.Dir, name)
			var src any
			if r, ok := replace[path]; ok {
				b, err := os.ReadFile(r)
				if err != nil {
					t.Fatal(err)
				}
				src = b
			}
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			files = append(files, f)
		}
		conf := types.Config{
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if m, ok := p.ImportMap[path]; ok {
					path = m // the standard library's vendored packages
				}
				if tp, ok := checked[path]; ok {
					return tp, nil
				}
				return nil, fmt.Errorf("%s is not listed before %s", path, p.ImportPath)
			}),
			Sizes:            types.SizesFor("gc", "amd64"),
			FakeImportC:      len(p.CgoFiles) > 0,
			IgnoreFuncBodies: p.Standard,
			Error:            func(err error) { problems = append(problems, err.Error()) },
		}
		checked[p.ImportPath], _ = conf.Check(p.ImportPath, fset, files, nil)
	}
	return problems
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// TestCrossBuild: every package of the module builds for Windows and
// macOS (the front end of `GOOS=windows go build ./...`; make cross runs
// the full builds).
func TestCrossBuild(t *testing.T) {
	for _, goos := range []string{"windows", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			t.Parallel()
			for _, p := range typeCheck(t, goos, "", module+"/...") {
				t.Error(p)
			}
		})
	}
}

// TestCrossBuild_Planted plants, in the real module (a go list overlay),
// a file of internal/fsx that every OS builds and that calls a function
// only the Unix files define: Linux still builds it, Windows must not.
// A Windows-only file with an unused variable is caught the same way.
func TestCrossBuild_Planted(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, src string
		want            map[string]string // goos: a problem it must report ("" none)
	}{
		{"unix-only call", "zz_planted.go", "package fsx\n\nfunc planted() { _ = openDirBeneath }\n",
			map[string]string{"linux": "", "windows": "undefined: openDirBeneath"}},
		{"unused on windows", "zz_planted_windows.go", "package fsx\n\nfunc planted() { x := 1 }\n",
			map[string]string{"linux": "", "windows": "declared and not used: x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "planted.go")
			if err := os.WriteFile(src, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, "internal", "fsx", tc.file): src}})
			overlay := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(overlay, ov, 0o644); err != nil {
				t.Fatal(err)
			}
			for goos, want := range tc.want {
				got := typeCheck(t, goos, overlay, module+"/internal/fsx")
				switch {
				case want == "" && len(got) > 0:
					t.Errorf("%s: %q, want no problem", goos, got)
				case want != "" && !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, want) }):
					t.Errorf("%s: %q, want one with %q", goos, got, want)
				}
			}
		})
	}
}

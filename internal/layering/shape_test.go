package layering

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The house's shape: a package root a reader can take in (at most
// maxFiles source files, spool's at most 26), every per-OS source file
// inside internal/ (the product's own packages read the same on every OS;
// a test may need one OS's facility, as the browser's need Linux's
// Chromium), and no Go file, test or not, over maxLines lines.
const (
	maxLines = 450
	maxFiles = 30
)

// fileLimits are the packages with a limit of their own.
var fileLimits = map[string]int{
	"spool":        27, // the Store and the task lifecycle only (issue 38), and its chained audit trail (issue 50)
	"internal/fsx": 40, // one small file per primitive and OS
}

// srcFile is a Go file of the module: its path relative to the module's
// root, with slashes, and its number of lines.
type srcFile struct {
	path  string
	lines int
}

// perOS matches the file names Go builds for some systems only.
var perOS = regexp.MustCompile(`_(linux|windows|darwin|unix|other|bsd|freebsd|openbsd|netbsd|dragonfly|solaris|plan9|js|wasip1)(_test)?\.go$`)

// shapeProblems lists where files break the house's shape.
func shapeProblems(files []srcFile) []string {
	var out []string
	perPkg := map[string]int{}
	for _, f := range files {
		if f.lines > maxLines {
			out = append(out, fmt.Sprintf("%s: %d lines, more than %d", f.path, f.lines, maxLines))
		}
		if perOS.MatchString(f.path) && !strings.HasSuffix(f.path, "_test.go") && !strings.HasPrefix(f.path, "internal/") {
			out = append(out, fmt.Sprintf("%s: a per-OS file outside internal/", f.path))
		}
		if !strings.HasSuffix(f.path, "_test.go") {
			perPkg[path.Dir(f.path)]++
		}
	}
	pkgs := make([]string, 0, len(perPkg))
	for p := range perPkg {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		limit, ok := fileLimits[p]
		if !ok {
			limit = maxFiles
		}
		if perPkg[p] > limit {
			out = append(out, fmt.Sprintf("%s: %d source files, more than %d", p, perPkg[p], limit))
		}
	}
	return out
}

// moduleFiles lists the module's Go files (node_modules and testdata
// left out).
func moduleFiles(t *testing.T, root string) []srcFile {
	t.Helper()
	var files []srcFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" || (strings.HasPrefix(n, ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, srcFile{path: filepath.ToSlash(rel), lines: bytes.Count(b, []byte("\n"))})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestShape(t *testing.T) {
	files := moduleFiles(t, "../..")
	if len(files) < 100 {
		t.Fatalf("found %d Go files; the walk missed the module", len(files))
	}
	for _, p := range shapeProblems(files) {
		t.Error(p)
	}
}

// TestShapeProblems: each rule catches its planted violation and passes
// the good tree.
func TestShapeProblems(t *testing.T) {
	good := []srcFile{{"spool/store.go", 160}, {"internal/fsx/fsops_linux.go", 30}, {"browser/launch.go", 450}}
	if p := shapeProblems(good); len(p) != 0 {
		t.Fatalf("the good tree: %q", p)
	}
	many := func(dir string, n int) []srcFile {
		var fs []srcFile
		for i := range n {
			fs = append(fs, srcFile{fmt.Sprintf("%s/f%d.go", dir, i), 10}, srcFile{fmt.Sprintf("%s/f%d_test.go", dir, i), 10})
		}
		return fs
	}
	for _, tt := range []struct {
		name  string
		plant []srcFile
		want  string
	}{
		{"a long file", []srcFile{{"lanes/lane.go", 451}}, "lanes/lane.go: 451 lines"},
		{"a long test", []srcFile{{"cmd/spoolgate/e2e_x_test.go", 900}}, "cmd/spoolgate/e2e_x_test.go: 900 lines"},
		{"a per-OS file", []srcFile{{"browser/launch_windows.go", 20}}, "browser/launch_windows.go: a per-OS file outside internal/"},
		{"a per-OS file beside its test", []srcFile{{"lanes/fifo_unix.go", 20}, {"lanes/fifo_linux_test.go", 20}}, "lanes/fifo_unix.go: a per-OS file outside internal/"},
		{"spool's 28th file", many("spool", 27), "spool: 28 source files, more than 27"},
		{"a crowded package", many("browser", 30), "browser: 31 source files, more than 30"},
	} {
		p := shapeProblems(append(slices.Clone(good), tt.plant...))
		if len(p) != 1 || !strings.HasPrefix(p[0], tt.want) {
			t.Errorf("%s: problems %q, want one starting %q", tt.name, p, tt.want)
		}
	}
}

// Command flakes reads `go test -json` on stdin and prints, for every test
// that failed at least once, how many of its runs failed; it exits 1 if
// any did. `make reliability` pipes the end-to-end suites run five times
// under load through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

type tally struct {
	runs, fails int
	worst       float64 // the longest run, seconds
}

func main() {
	tests := map[string]*tally{}
	pkgFail := map[string]bool{}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a build error's plain text
		}
		if e.Test == "" {
			if e.Action == "fail" {
				pkgFail[e.Package] = true
			}
			continue
		}
		if strings.Contains(e.Test, "/") || (e.Action != "pass" && e.Action != "fail") {
			continue // subtests count through their test
		}
		name := strings.TrimPrefix(e.Package, "github.com/spoolgate/spoolgate/") + " " + e.Test
		t := tests[name]
		if t == nil {
			t = &tally{}
			tests[name] = t
		}
		t.runs++
		t.worst = max(t.worst, e.Elapsed)
		if e.Action == "fail" {
			t.fails++
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range tests {
			if !yield(n) {
				return
			}
		}
	})
	bad := 0
	runs := 0
	for _, n := range names {
		t := tests[n]
		runs += t.runs
		if t.fails > 0 {
			bad++
			fmt.Printf("FLAKY %s: failed %d of %d (longest %.1fs)\n", n, t.fails, t.runs, t.worst)
		}
	}
	for p := range pkgFail {
		if !slices.ContainsFunc(names, func(n string) bool {
			return strings.HasPrefix(n, strings.TrimPrefix(p, "github.com/spoolgate/spoolgate/")+" ") && tests[n].fails > 0
		}) {
			bad++
			fmt.Printf("FAILED %s outside any test (build, TestMain, a timeout)\n", p)
		}
	}
	fmt.Printf("flakes: %d tests, %d runs, %d failed at least once\n", len(names), runs, bad)
	if bad > 0 {
		os.Exit(1)
	}
}

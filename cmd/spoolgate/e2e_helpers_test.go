//go:build unix

package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The end-to-end acceptance tests (issues 4 and 5) run the real daemon,
// `spoolgate run`, as a subprocess with its REAL executors: apimodel
// against examples/apistand and a real headless Chromium against
// examples/chatstand. The binary is this test binary, found on PATH as
// `spoolgate` thanks to testscript.Main in TestMain; SPOOLGATE_FAKE is
// removed from its environment so no fake is used. Every helper here is
// named e2e* so it cannot clash with the other suites of this package.

// e2eFilesContaining walks root and returns every regular file whose bytes
// contain needle.
func e2eFilesContaining(t *testing.T, root, needle string) (hits []string, n int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(needle)) {
			hits = append(hits, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	slices.Sort(hits)
	return hits, n
}

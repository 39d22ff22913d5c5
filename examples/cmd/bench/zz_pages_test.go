package main

import (
	"context"
	"os"
	"testing"
)

func TestPagesOnly(t *testing.T) {
	figs, ok := pagesOverAYear(context.Background(), t.TempDir(), os.Stderr)
	if !ok {
		t.Fatal("failed")
	}
	for _, f := range figs {
		t.Logf("%s: %.1f %s (base %.1f, ratio %.2f)", f.Name, f.Value, f.Unit, f.Baseline, f.Ratio)
	}
}

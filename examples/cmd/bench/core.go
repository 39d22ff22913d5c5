package main

import (
	"context"
	"io"
)

// coreFigure is one spool-core measurement.
type coreFigure struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Baseline float64 `json:"baseline,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
	Note     string  `json:"note"`
}

func measureCore(ctx context.Context, o options, stderr io.Writer) ([]coreFigure, error) {
	return nil, nil
}

func writeCore(w io.Writer, fs []coreFigure) {}

package main

import (
	"context"
	"io"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/tokens"
)

// BenchmarkRunRulers is a full run (read, analyse, write CSV and Parquet) of
// the real corpus with different ruler sets: the difference between
// "chars4,chars4msg" and "default" is what the calibrated ruler costs.
func BenchmarkRunRulers(b *testing.B) {
	corpus := testutil.RealCorpus(b)
	for _, set := range []string{"chars4,chars4msg", "default", "all"} {
		b.Run(set, func(b *testing.B) {
			names, err := tokens.ParseNames(set)
			if err != nil {
				b.Fatal(err)
			}
			out := b.TempDir()
			for i := 0; i < b.N; i++ {
				opts := runOptions{Paths: []string{corpus}, Jobs: 2, Out: out, Quiet: true,
					Formats: outputFormats{Files: report.Formats{CSV: true, Parquet: true}}, Config: analysis.Config{RulerNames: names, Overhead: "segments"}}
				if err := runCommand(context.Background(), opts, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

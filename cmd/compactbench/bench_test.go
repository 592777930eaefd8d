package main

import (
	"context"
	"io"
	"testing"

	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/testutil"
)

// BenchmarkRunRulers is a full run (read, analyse, write CSV and Parquet) of
// the real corpus with different ruler sets: the difference between
// "chars4,chars4msg" and "default" is what the calibrated ruler costs.
func BenchmarkRunRulers(b *testing.B) {
	corpus := testutil.RealCorpus(b)
	for _, set := range []string{"chars4,chars4msg", "default", "all"} {
		b.Run(set, func(b *testing.B) {
			out := b.TempDir()
			for i := 0; i < b.N; i++ {
				opts := testRunOptions(b, []string{corpus}, out, func(in *plan.Input) {
					in.Jobs, in.Format, in.Rulers = 2, "csv,parquet", set
				})
				if err := runCommand(context.Background(), opts, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

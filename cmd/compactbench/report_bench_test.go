package main

import (
	"context"
	"io"
	"testing"

	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/testutil"
)

// BenchmarkRunReports is a full run of the real corpus (window 60000, so
// every strategy compacts) with the tables and summary.json only, and with
// report.md and report.html too: the difference is what the reports cost
// (collecting chart data as results stream in, and rendering).
func BenchmarkRunReports(b *testing.B) {
	corpus := testutil.RealCorpus(b)
	for _, c := range []struct {
		name    string
		formats string
	}{
		{"tables", "csv,parquet,json"},
		{"tables+reports", "csv,parquet,json,md,html"},
	} {
		b.Run(c.name, func(b *testing.B) {
			out := b.TempDir()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				opts := testRunOptions(b, []string{corpus}, out, func(in *plan.Input) {
					in.Jobs, in.Format = 2, c.formats
					in.Strategy.Window, in.Strategy.WindowSet = 60000, true
				})
				if err := runCommand(context.Background(), opts, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

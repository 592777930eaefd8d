package main

import (
	"context"
	"io"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/report"
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
		formats report.Formats
	}{
		{"tables", report.Formats{CSV: true, Parquet: true, JSON: true}},
		{"tables+reports", report.Formats{CSV: true, Parquet: true, JSON: true, Markdown: true, HTML: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			out := b.TempDir()
			cc := compaction.DefaultConfig()
			cc.Window = 60000
			cfg := analysis.Config{Overhead: "segments", Compaction: cc}
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				opts := runOptions{Paths: []string{corpus}, Jobs: 2, Out: out, Quiet: true, Evidence: "all",
					Formats: outputFormats{Files: c.formats}, Config: cfg}
				if err := runCommand(context.Background(), opts, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

package main

import (
	"context"
	"io"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
)

// BenchmarkEmit is the output side of a full default run of the real
// corpus alone: the files are read and analysed once, before the timer,
// and each iteration opens the output set, adds every file's results (the
// tables as CSV and Parquet, the summary and report data) and closes it
// (summary.json, report.md, report.html, calibration). cpu-ms/op is
// process CPU time, which a shared machine distorts less than wall time.
func BenchmarkEmit(b *testing.B) {
	corpus := testutil.RealCorpus(b)
	out := b.TempDir()
	opts := testRunOptions(b, []string{corpus}, out, nil)
	j := newRunJob(opts)
	results := make([][]*analysis.Result, len(j.files))
	lo := loader.Options{Format: opts.InputFormat, Limits: opts.Limits}
	for i, f := range j.files {
		if f.Problem != "" {
			results[i] = []*analysis.Result{analysis.Analyze(loader.ProblemTranscript(f.Path, f.Problem), &opts.Config)}
			continue
		}
		rs, err := analyzeFile(context.Background(), f.Path, lo, &opts.Config, io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		results[i] = rs
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		j := newRunJob(opts)
		if err := j.open(io.Discard); err != nil {
			b.Fatal(err)
		}
		for k, rs := range results {
			if err := j.emit(k, rs); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.finish(); err != nil {
			b.Fatal(err)
		}
		if _, err := j.w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

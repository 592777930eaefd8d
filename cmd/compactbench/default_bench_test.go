package main

import (
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
)

// BenchmarkRunDefault is the full default run of the real corpus, as
// `compactbench run -q CORPUS` does it (every strategy, every default rule
// set, every output format), with -j 1 so that a CPU profile of it
// (-cpuprofile) reads as the cost of each stage; cpu-ms/op is process CPU
// time, which a shared machine distorts less than wall time.
func BenchmarkRunDefault(b *testing.B) {
	corpus := testutil.RealCorpus(b)
	out := b.TempDir()
	b.ReportAllocs()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		if code, _, errs := runCLI(b, "run", corpus, "-q", "--no-progress", "-j", "1", "-o", out); code != 0 {
			b.Fatalf("exit %d: %s", code, errs)
		}
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

package anchors

import (
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// corpusTurns loads the turns of every real transcript.
func corpusTurns(b testing.TB) ([][]transcript.Turn, int64) {
	dir := testutil.RealCorpus(b)
	in, err := loader.Walk([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	var all [][]transcript.Turn
	var size int64
	for _, f := range in.Files {
		size += f.Size
		loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
			all = append(all, t.Turns())
			return nil
		})
	}
	return all, size
}

// BenchmarkEvaluateCorpus evaluates the default rule sets on every turn of
// the real corpus (turn grouping and loading excluded).
func BenchmarkEvaluateCorpus(b *testing.B) {
	all, size := corpusTurns(b)
	suite := NewSuite(Defaults()...)
	b.SetBytes(size)
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for _, ts := range all {
			suite.Evaluate(ts)
		}
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkFlowCorpus is one Flow (anchors + PreservationContext) per
// transcript on top of a suite evaluation.
func BenchmarkFlowCorpus(b *testing.B) {
	all, size := corpusTurns(b)
	suite := NewSuite(Defaults()...)
	b.SetBytes(size)
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for _, ts := range all {
			for _, e := range suite.Evaluate(ts) {
				e.Flow(0, len(ts))
			}
		}
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// BenchmarkLoadCorpus is the loading the two benchmarks above leave out, for
// scale.
func BenchmarkLoadCorpus(b *testing.B) {
	dir := testutil.RealCorpus(b)
	in, err := loader.Walk([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range in.Files {
			loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
				t.Turns()
				return nil
			})
		}
	}
}

package anchors

import (
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// corpus loads every real transcript and its turns.
func corpus(b testing.TB) ([]*transcript.Transcript, [][]transcript.Turn, int64) {
	dir := testutil.RealCorpus(b)
	in, err := loader.Walk([]string{dir})
	if err != nil {
		b.Fatal(err)
	}
	var ts []*transcript.Transcript
	var all [][]transcript.Turn
	var size int64
	for _, f := range in.Files {
		size += f.Size
		loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
			ts = append(ts, t)
			all = append(all, t.Turns())
			return nil
		})
	}
	return ts, all, size
}

// BenchmarkEvaluateCorpus evaluates the default rule sets on every turn of
// the real corpus (turn grouping and loading excluded).
func BenchmarkEvaluateCorpus(b *testing.B) {
	_, all, size := corpus(b)
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
	_, all, size := corpus(b)
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

// BenchmarkEvidenceCorpus derives every kind of evidence label of the real
// corpus.
func BenchmarkEvidenceCorpus(b *testing.B) {
	ts, all, size := corpus(b)
	b.SetBytes(size)
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for k, t := range ts {
			DeriveEvidence(t, all[k], EvidenceKinds)
		}
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

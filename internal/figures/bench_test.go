package figures

import (
	"math"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
)

// BenchmarkSetFinishSpilled is a strategy's set of 300,000 event values
// (past the memory bound, so on disk) finished: its medians selected.
func BenchmarkSetFinishSpilled(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		var s Set
		e := analysis.EventRow{NeedFacts: 3}
		for i := range 300_000 {
			e.CompressionRatio = math.Sin(float64(i)) / 2
			e.NeedKept = int64(i % 4)
			s.AddEvent(&e)
		}
		b.StartTimer()
		s.Finish()
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
	}
}

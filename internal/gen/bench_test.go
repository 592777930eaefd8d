package gen

import (
	"io"
	"testing"
)

// BenchmarkGenerate measures single-core generation speed in MB of output
// per second, across every scenario.
func BenchmarkGenerate(b *testing.B) {
	discard := func(string) (io.Writer, error) { return io.Discard, nil }
	var total int64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m, err := Generate(SpecAt(1, Scenarios, i), discard)
		if err != nil {
			b.Fatal(err)
		}
		total += m.Bytes()
	}
	b.ReportMetric(float64(total)/1e6/b.Elapsed().Seconds(), "MB/s")
}

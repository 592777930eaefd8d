package tokens

import (
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// benchBlocks returns the blocks of the real sessions (the benchmark skips
// without the corpus).
func benchBlocks(b *testing.B) []transcript.Block {
	var blocks []transcript.Block
	for _, c := range loadCorpus(b, true) {
		for i := range c.t.Messages {
			blocks = append(blocks, c.t.Messages[i].Blocks...)
		}
	}
	return blocks
}

// BenchmarkRulers counts every block of the corpus once per iteration,
// uncached, on one goroutine: tokens/s is per core.
func BenchmarkRulers(b *testing.B) {
	blocks := benchBlocks(b)
	bytes := 0
	for i := range blocks {
		bytes += len(blocks[i].Text) + len(blocks[i].Input) + len(blocks[i].ToolName)
	}
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			r, _ := ByName(name)
			r = r.Uncached()
			r.Text("warm up") // BPE vocabularies load on first use
			b.SetBytes(int64(bytes))
			b.ResetTimer()
			total := 0
			for i := 0; i < b.N; i++ {
				total = 0
				for j := range blocks {
					total += r.Block(&blocks[j])
				}
			}
			b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkChars4Pair counts every block of the corpus with chars4 and
// chars4msg, one ruler after the other (separate) or in one pass over each
// text (paired, as EstimateCalls does when it measures both).
func BenchmarkChars4Pair(b *testing.B) {
	blocks := benchBlocks(b)
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			for j := range blocks {
				_ = (chars4{}).block(&blocks[j]) + (chars4msg{}).block(&blocks[j])
			}
		}
	})
	b.Run("paired", func(b *testing.B) {
		for b.Loop() {
			for j := range blocks {
				x, y := chars4Pair(&blocks[j])
				_ = x + y
			}
		}
	})
}

package tokens

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/transcript"
)

// benchBlocks returns the blocks of the real sessions (or, without the
// corpus, a synthetic mix of prose, code and JSON).
func benchBlocks(b *testing.B) []transcript.Block {
	var blocks []transcript.Block
	func() {
		defer func() { recover() }()
		for _, c := range loadCorpus(b, true) {
			for i := range c.t.Messages {
				blocks = append(blocks, c.t.Messages[i].Blocks...)
			}
		}
	}()
	if len(blocks) == 0 {
		prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200)
		code := strings.Repeat("func f(x int) int {\n\treturn x * 2 // double\n}\n", 200)
		for i := 0; i < 200; i++ {
			blocks = append(blocks,
				transcript.Block{Kind: transcript.BlockText, Text: prose},
				transcript.Block{Kind: transcript.BlockToolUse, ToolName: "Write", Input: `{"file_path":"/a.go","content":"` + code[:500] + `"}`},
				transcript.Block{Kind: transcript.BlockToolResult, Text: code})
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

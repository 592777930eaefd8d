package loader

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
)

// claudeCodeCorpus loads every Claude Code file of the real corpus into memory.
func claudeCodeCorpus(b *testing.B) (paths []string, data [][]byte, total int64) {
	for _, p := range corpusFiles(b, testutil.RealCorpus(b), ".jsonl") {
		if strings.Contains(p, "codex") {
			continue
		}
		buf, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		paths, data = append(paths, p), append(data, buf)
		total += int64(len(buf))
	}
	return paths, data, total
}

// BenchmarkReadClaudeCode measures the reader alone (parse, tree, messages)
// on the real corpus held in memory; MB/s is per core (wall clock), and
// cpu-MB/s the same by process CPU time (garbage collection included),
// which a loaded machine distorts less.
func BenchmarkReadClaudeCode(b *testing.B) {
	paths, data, total := claudeCodeCorpus(b)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for j := range data {
			readClaudeCode(&Source{Path: paths[j], R: bytes.NewReader(data[j])})
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/1e6/(testutil.CPUTime()-cpu).Seconds(), "cpu-MB/s")
}

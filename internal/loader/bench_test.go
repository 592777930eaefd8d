package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusFiles loads every Claude Code file of the real corpus into memory.
func corpusFiles(b *testing.B) (paths []string, data [][]byte, total int64) {
	root := RealCorpus(b)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || strings.Contains(p, "codex") {
			return err
		}
		buf, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		paths, data = append(paths, p), append(data, buf)
		total += int64(len(buf))
		return nil
	})
	return paths, data, total
}

// BenchmarkReadClaudeCode measures the reader alone (parse, tree, messages)
// on the real corpus held in memory; MB/s is per core.
func BenchmarkReadClaudeCode(b *testing.B) {
	paths, data, total := corpusFiles(b)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range data {
			readClaudeCode(paths[j], data[j])
		}
	}
}

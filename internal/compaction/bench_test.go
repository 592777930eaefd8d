package compaction

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/transcript"
)

// corpus loads the real corpus's Claude Code sessions and subagents, or skips.
func corpus(tb testing.TB) []*transcript.Transcript {
	tb.Helper()
	root := "../../../shared/real-corpus"
	if _, err := os.Stat(root); err != nil {
		tb.Skip("real corpus not found at ../shared/real-corpus; skipping")
	}
	var out []*transcript.Transcript
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		loader.ReadFile(p, loader.Options{}, func(t *transcript.Transcript) error {
			if t.Format == loader.ClaudeCodeFormat && (t.Kind == transcript.KindSession || t.Kind == transcript.KindSubagent) && len(t.Messages) > 0 {
				out = append(out, t)
			}
			return nil
		})
		return nil
	})
	return out
}

func textBytes(ts []*transcript.Transcript) int64 {
	var n int64
	for _, t := range ts {
		for _, m := range t.Messages {
			for _, b := range m.Blocks {
				n += int64(len(b.Text) + len(b.Input))
			}
		}
	}
	return n
}

// BenchmarkIndexFacts measures fact extraction over every message of the
// real corpus (MB/s of model-visible text).
func BenchmarkIndexFacts(b *testing.B) {
	ts := corpus(b)
	b.SetBytes(textBytes(ts))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range ts {
			IndexFacts(t)
		}
	}
}

// BenchmarkReplayAll replays every strategy over the real corpus with a
// 60,000-token window, so that every strategy compacts.
func BenchmarkReplayAll(b *testing.B) {
	ts := corpus(b)
	metric := ruler(b, "calibrated")
	b.SetBytes(textBytes(ts))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range ts {
			opt := &Options{Window: 60_000, Metric: metric, Rulers: rulers}
			sh := NewShared(t)
			ov := Overhead(sh, metric)
			base := Baseline(sh, opt, ov)
			for _, spec := range Specs() {
				Replay(sh, spec.ID, spec.New(spec.Params()), opt, ov, base.CostUSD)
			}
		}
	}
}

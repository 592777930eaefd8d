package analysis

import (
	"testing"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func loadRealCorpus(b *testing.B) []*transcript.Transcript {
	in, err := loader.Walk([]string{testutil.RealCorpus(b)})
	if err != nil {
		b.Skipf("real corpus not available: %v", err)
	}
	var ts []*transcript.Transcript
	for _, f := range in.Files {
		loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
			ts = append(ts, t)
			return nil
		})
	}
	return ts
}

// BenchmarkAnalyzeRulers analyses the whole real corpus (already in memory,
// one goroutine, block caches cleared every iteration) with different
// ruler sets; the difference between sets is what a ruler costs a run.
func BenchmarkAnalyzeRulers(b *testing.B) {
	ts := loadRealCorpus(b)
	for _, set := range []string{"chars4", "chars4,chars4msg", "default", "calibrated"} {
		b.Run(set, func(b *testing.B) {
			ids, _ := tokens.ParseIDs(set)
			cfg := &Config{Rulers: rulerSet(b, tokens.RulerSpec{Measured: ids, Metric: tokens.RulerCalibrated, Overhead: tokens.AnchorSegments})}
			for i := 0; i < b.N; i++ {
				for _, t := range ts {
					for m := range t.Messages {
						for k := range t.Messages[m].Blocks {
							t.Messages[m].Blocks[k].ResetTokenCache()
						}
					}
					Analyze(t, cfg)
				}
			}
		})
	}
}

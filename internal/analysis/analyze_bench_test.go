package analysis_test

import (
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// defaultRun resolves the run command's default flags over the real corpus
// (or skips), and loads its transcripts.
func defaultRun(b *testing.B, window int) (*plan.Run, []*transcript.Transcript) {
	b.Helper()
	in := plan.Defaults()
	in.Paths = []string{testutil.RealCorpus(b)}
	if window > 0 {
		in.Strategy.Window, in.Strategy.WindowSet = window, true
	}
	r, err := plan.ForRun(in)
	if err != nil {
		b.Fatal(err)
	}
	var ts []*transcript.Transcript
	for _, f := range r.Files {
		loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
			ts = append(ts, t)
			return nil
		})
	}
	return r, ts
}

// resetCaches clears the block token caches, so that every iteration counts
// as a run does (each transcript read once).
func resetCaches(ts []*transcript.Transcript) {
	for _, t := range ts {
		for m := range t.Messages {
			for k := range t.Messages[m].Blocks {
				t.Messages[m].Blocks[k].ResetTokenCache()
			}
		}
	}
}

// BenchmarkAnalyzeDefault analyses the real corpus (already in memory, one
// goroutine, block caches cleared every iteration) with the run command's
// default configuration, at the models' windows and at a 60,000-token
// window: every stage of a run after loading (calls, replays of every
// strategy, anchors) and before the writers. "facts" is the fact index
// alone, which Analyze builds for transcripts with a compaction; the rest of
// analyze is the difference. cpu-ms/op is process CPU time, which a loaded
// machine distorts less than ns/op.
func BenchmarkAnalyzeDefault(b *testing.B) {
	for _, w := range []struct {
		name   string
		window int
	}{{"model", 0}, {"w60k", 60_000}} {
		r, ts := defaultRun(b, w.window)
		b.Run(w.name+"/analyze", func(b *testing.B) {
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				resetCaches(ts)
				for _, t := range ts {
					analysis.Analyze(t, &r.Config)
				}
			}
			b.ReportMetric(float64(testutil.CPUTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
		b.Run(w.name+"/facts", func(b *testing.B) {
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for _, t := range ts {
					compaction.IndexFacts(t)
				}
			}
			b.ReportMetric(float64(testutil.CPUTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

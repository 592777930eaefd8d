package compaction

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// corpus loads the real corpus's Claude Code sessions and subagents, or skips.
func corpus(tb testing.TB) []*transcript.Transcript {
	return realTranscripts(tb, true)
}

// realTranscripts loads the real corpus's replayable transcripts (sessions
// and subagents with messages), of Claude Code only or of every format.
func realTranscripts(tb testing.TB, claudeCodeOnly bool) []*transcript.Transcript {
	tb.Helper()
	root := testutil.RealCorpus(tb)
	var out []*transcript.Transcript
	in, err := loader.Walk([]string{root})
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range in.Files {
		loader.ReadFile(f.Path, loader.Options{}, func(t *transcript.Transcript) error {
			if claudeCodeOnly && t.Format != loader.ClaudeCodeFormat {
				return nil
			}
			if (t.Kind == transcript.KindSession || t.Kind == transcript.KindSubagent) && len(t.Messages) > 0 {
				out = append(out, t)
			}
			return nil
		})
	}
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
// real corpus (MB/s of model-visible text; cpu-MB/s by process CPU time,
// which a loaded machine distorts less).
func BenchmarkIndexFacts(b *testing.B) {
	unchecked(b)
	ts := corpus(b)
	n := textBytes(ts)
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for _, t := range ts {
			IndexFacts(t)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/1e6/(testutil.CPUTime()-cpu).Seconds(), "cpu-MB/s")
}

// BenchmarkReplayAll replays every strategy over the real corpus with a
// 60,000-token window, so that every strategy compacts.
func BenchmarkReplayAll(b *testing.B) {
	unchecked(b)
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

// BenchmarkStrategiesVsLoading compares, in process CPU time (the machine
// may be shared, so wall time would mislead), loading the real corpus (read,
// parse, active path) with replaying all nine strategies and the
// no-compaction baseline over it, at the models' windows and at a 60,000-token
// window. Target (issue 5): replaying costs less than loading.
func BenchmarkStrategiesVsLoading(b *testing.B) {
	unchecked(b)
	corpus(b) // skips without the corpus
	var paths []string
	filepath.WalkDir(testutil.RealCorpus(b), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			paths = append(paths, p)
		}
		return err
	})
	metric := ruler(b, "calibrated")
	var load, replayModel, replay60k time.Duration
	for i := 0; i < b.N; i++ {
		var ts []*transcript.Transcript
		start := testutil.CPUTime()
		for _, p := range paths {
			loader.ReadFile(p, loader.Options{}, func(t *transcript.Transcript) error {
				if t.Format == loader.ClaudeCodeFormat && (t.Kind == transcript.KindSession || t.Kind == transcript.KindSubagent) {
					ts = append(ts, t)
				}
				return nil
			})
		}
		loaded := testutil.CPUTime()
		load += loaded - start
		replayAll := func(window int) time.Duration {
			t0 := testutil.CPUTime()
			for _, t := range ts {
				opt := &Options{Window: window, Metric: metric, Rulers: rulers}
				sh := NewShared(t)
				ov := Overhead(sh, metric)
				base := Baseline(sh, opt, ov)
				for _, spec := range Specs() {
					Replay(sh, spec.ID, spec.New(spec.Params()), opt, ov, base.CostUSD)
				}
			}
			return testutil.CPUTime() - t0
		}
		replayModel += replayAll(0)
		replay60k += replayAll(60_000)
	}
	n := float64(b.N)
	b.ReportMetric(float64(load.Milliseconds())/n, "load-cpu-ms")
	b.ReportMetric(float64(replayModel.Milliseconds())/n, "replay-cpu-ms")
	b.ReportMetric(float64(replay60k.Milliseconds())/n, "replay60k-cpu-ms")
	b.ReportMetric(float64(replayModel)/float64(load), "replay/load")
	b.ReportMetric(float64(replay60k)/float64(load), "replay60k/load")
}

// BenchmarkReplayEach replays each strategy alone over the real corpus, at
// the models' windows and at a 60,000-token window (every session compacts).
// "prepare" is the shared preparation and the baseline, "facts" the fact
// index; a strategy's figure leaves both out (the Shared are built once, and
// their fact index before the strategies run). cpu-ms/op is process CPU
// time, which a loaded machine distorts less than ns/op.
func BenchmarkReplayEach(b *testing.B) {
	unchecked(b)
	ts := corpus(b)
	metric := ruler(b, "calibrated")
	for _, w := range []struct {
		name   string
		window int
	}{{"model", 0}, {"w60k", 60_000}} {
		opt := &Options{Metric: metric, Rulers: rulers, Window: w.window}
		b.Run(w.name+"/prepare", func(b *testing.B) {
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for _, t := range ts {
					sh := NewShared(t)
					Baseline(sh, opt, Overhead(sh, metric))
				}
			}
			reportCPU(b, cpu)
		})
		b.Run(w.name+"/facts", func(b *testing.B) {
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for _, t := range ts {
					NewShared(t).Facts()
				}
			}
			reportCPU(b, cpu)
		})
		shared := make([]*Shared, len(ts))
		for i, t := range ts {
			shared[i] = NewShared(t)
			shared[i].Facts()
		}
		for _, spec := range Specs() {
			b.Run(w.name+"/"+spec.ID, func(b *testing.B) {
				b.ReportAllocs()
				cpu := testutil.CPUTime()
				var events []Event // reused, as the run's replay does
				for i := 0; i < b.N; i++ {
					for _, sh := range shared {
						_, events = ReplayAppend(sh, spec.ID, spec.New(spec.Params()), opt, 0, 1, events)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// reportCPU reports the process CPU time since cpu per op, in ms.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
}

// unchecked turns off, for a benchmark, the checks every test makes of
// what strategies report (checkSame, checkPrune), which cost what they
// check.
func unchecked(b *testing.B) {
	checkSame, checkPrune = false, false
	b.Cleanup(func() { checkSame, checkPrune = true, true })
}

package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
)

// realCorpus returns ../shared/real-corpus beside the repository root.
func realCorpus(b *testing.B) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Skip("repository root not found")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "real-corpus")
	if _, err := os.Stat(c); err != nil {
		b.Skipf("real corpus not available at %s", c)
	}
	return c
}

// BenchmarkRunRulers is a full run (read, analyse, write CSV and Parquet) of
// the real corpus with different ruler sets: the difference between
// "chars4,chars4msg" and "default" is what the calibrated ruler costs.
func BenchmarkRunRulers(b *testing.B) {
	corpus := realCorpus(b)
	for _, set := range []string{"chars4,chars4msg", "default", "all"} {
		b.Run(set, func(b *testing.B) {
			names, err := tokens.ParseNames(set)
			if err != nil {
				b.Fatal(err)
			}
			out := b.TempDir()
			for i := 0; i < b.N; i++ {
				opts := runOptions{Paths: []string{corpus}, Jobs: 2, Out: out, Quiet: true,
					Formats: outputFormats{Files: report.Formats{CSV: true, Parquet: true}}, Config: analysis.Config{RulerNames: names, Overhead: "segments"}}
				if err := runCommand(context.Background(), opts, io.Discard, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

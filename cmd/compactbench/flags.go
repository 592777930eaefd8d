package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/tokens"
)

// Flags that several commands declare alike. They are built afresh for
// every command, like the commands themselves.

// inputFormatFlag is --input-format; checkInputFormat validates it.
func inputFormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "input-format", Usage: "force a reader instead of detecting (" + strings.Join(loader.FormatNames(), ", ") + ")"}
}

// limitFlags bound what one input file may cost (loader.Limits).
func limitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "max-line", Value: "256MiB", Usage: "longest line or JSON record read; a longer one is a problem row"},
		&cli.IntFlag{Name: "max-depth", Value: loader.DefaultMaxDepth, Usage: fmt.Sprintf("deepest JSON nesting read (at most %d)", loader.MaxDepthCeiling)},
		&cli.IntFlag{Name: "max-problems", Value: loader.DefaultMaxProblems, Usage: "problems listed per transcript; the rest are counted in one row"},
		&cli.StringFlag{Name: "max-decompressed", Value: "16GiB", Usage: "bytes a .gz, .zst or .zip file may decompress to"},
	}
}

// readLimits validates the limit flags.
func readLimits(c *cli.Context) (loader.Limits, error) {
	size := func(name string) (int64, error) {
		n, err := humanize.ParseBytes(c.String(name))
		if err != nil || n == 0 || n > 1<<50 {
			return 0, usageErr("--%s %q: want a size such as 64MiB or 2GiB", name, c.String(name))
		}
		return int64(n), nil
	}
	var l loader.Limits
	line, err := size("max-line")
	if err != nil {
		return l, err
	}
	if line > 1<<31-1 {
		return l, usageErr("--max-line %q: want at most 2GiB", c.String("max-line"))
	}
	if l.MaxDecompressed, err = size("max-decompressed"); err != nil {
		return l, err
	}
	l.MaxLine, l.MaxDepth, l.MaxProblems = int(line), c.Int("max-depth"), c.Int("max-problems")
	if l.MaxDepth < 1 {
		return l, usageErr("--max-depth: want 1 to %d, got %d", loader.MaxDepthCeiling, l.MaxDepth)
	}
	if l.MaxProblems < 1 {
		return l, usageErr("--max-problems: want at least 1, got %d", l.MaxProblems)
	}
	if err := l.Validate(); err != nil {
		return l, usageErr("%v", err)
	}
	return l, nil
}

// checkInputFormat rejects an unknown --input-format before any file is
// read ("" detects the format of each file).
func checkInputFormat(name string) error {
	if name == "" {
		return nil
	}
	if _, err := loader.Lookup(name); err != nil {
		return usageErr("--input-format: %v", err)
	}
	return nil
}

// metricFlags are --ruler and --calibration, which rulerFlags reads.
func metricFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ruler", Value: tokens.Calibrated, Usage: "the metric ruler"},
		&cli.StringFlag{Name: "calibration", Usage: "factors `FILE` for the calibrated ruler (written by compactbench calibrate)"},
	}
}

// strategyFlags are --strategies, --mode, --window and --config, which
// compactionBase reads.
func strategyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "strategies", Usage: "strategies to replay, comma-separated (default all; see compactbench strategies)"},
		&cli.StringFlag{Name: "mode", Value: "replay", Usage: "replay (trigger before every recorded call) or once (compact once at the end)"},
		&cli.IntFlag{Name: "window", Usage: "override every model's context window (tokens), e.g. 60000 to make short sessions compact"},
		&cli.StringFlag{Name: "config", Usage: "strategies file (YAML): mode, window, strategies, params, prices"},
	}
}

// loadCompactionConfig reads a strategies file (--config), or returns the
// defaults when path is empty.
func loadCompactionConfig(path string) (*compaction.Config, error) {
	if path == "" {
		return compaction.DefaultConfig(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	cfg, err := compaction.ParseConfig(data, path)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	return cfg, nil
}

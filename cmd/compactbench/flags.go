package main

import (
	"os"
	"strings"

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

// metricFlags are --ruler, --calibration (which rulerFlags reads) and
// --models (loadModels).
func metricFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ruler", Value: tokens.Calibrated, Usage: "the metric ruler"},
		&cli.StringFlag{Name: "calibration", Usage: "factors `FILE` for the calibrated ruler (written by compactbench calibrate)"},
		modelsFlag(),
	}
}

// modelsFlag is --models, the model table file.
func modelsFlag() cli.Flag {
	return &cli.StringFlag{Name: "models", Usage: "model table `FILE` (YAML: per model-name pattern its tokenizer, windows, output limit, prices, thinking rule) instead of the shipped one"}
}

// loadModels reads a model table (--models), or returns nil (the shipped
// table) when path is empty.
func loadModels(path string) (*tokens.Models, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--models: %v", err)
	}
	m, err := tokens.ParseModels(data)
	if err != nil {
		return nil, usageErr("--models %s: %v", path, err)
	}
	return m, nil
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

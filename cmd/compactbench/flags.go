package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
)

// Flags that several commands declare alike, with plan.Defaults' values.
// They are built afresh for every command, like the commands themselves;
// each command reads them into a plan input (runInput, tuneInput) and
// internal/plan resolves and validates them.

// outputFormats, defaultFormats, formatsHelp and parseFormats are
// internal/plan's, named as merge uses them.
type outputFormats = plan.Formats

const (
	defaultFormats = plan.DefaultFormats
	formatsHelp    = plan.FormatsHelp
)

func parseFormats(s string) (outputFormats, error) { return plan.ParseFormats(s) }

// inputFormatFlag is --input-format (plan.InputFormat validates it).
func inputFormatFlag() cli.Flag {
	return &cli.StringFlag{Name: "input-format", Usage: "force a reader instead of detecting (" + strings.Join(loader.FormatNames(), ", ") + ")"}
}

// limitFlags bound what one input file may cost (plan.Limits).
func limitFlags() []cli.Flag {
	d := plan.Defaults().Limits
	return []cli.Flag{
		&cli.StringFlag{Name: "max-line", Value: d.MaxLine, Usage: "longest line or JSON record read; a longer one is a problem row"},
		&cli.IntFlag{Name: "max-depth", Value: d.MaxDepth, Usage: fmt.Sprintf("deepest JSON nesting read (at most %d)", loader.MaxDepthCeiling)},
		&cli.IntFlag{Name: "max-problems", Value: d.MaxProblems, Usage: "problems listed per transcript; the rest are counted in one row"},
		&cli.StringFlag{Name: "max-decompressed", Value: d.MaxDecompressed, Usage: "bytes a .gz, .zst or .zip file may decompress to"},
	}
}

// limitsInput reads the limit flags.
func limitsInput(c *cli.Context) plan.LimitsInput {
	return plan.LimitsInput{MaxLine: c.String("max-line"), MaxDepth: c.Int("max-depth"),
		MaxProblems: c.Int("max-problems"), MaxDecompressed: c.String("max-decompressed")}
}

// metricFlags are --ruler, --calibration and --models.
func metricFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ruler", Value: plan.Defaults().Metric.Ruler, Usage: "the metric ruler"},
		&cli.StringFlag{Name: "calibration", Usage: "factors `FILE` for the calibrated ruler (written by compactbench calibrate)"},
		modelsFlag(),
	}
}

// metricInput reads the metric flags.
func metricInput(c *cli.Context) plan.MetricInput {
	return plan.MetricInput{Ruler: c.String("ruler"), Calibration: c.String("calibration"), Models: c.String("models")}
}

// modelsFlag is --models, the model table file.
func modelsFlag() cli.Flag {
	return &cli.StringFlag{Name: "models", Usage: "model table `FILE` (YAML: per model-name pattern its tokenizer, windows, output limit, prices, thinking rule) instead of the shipped one"}
}

// strategyFlags are --strategies, --mode, --window and --config.
func strategyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "strategies", Usage: "strategies to replay, comma-separated (default all; see compactbench strategies)"},
		&cli.StringFlag{Name: "mode", Value: plan.Defaults().Strategy.Mode, Usage: "replay (trigger before every recorded call) or once (compact once at the end)"},
		&cli.IntFlag{Name: "window", Usage: "override every model's context window (tokens), e.g. 60000 to make short sessions compact"},
		&cli.StringFlag{Name: "config", Usage: "strategies file (YAML): mode, window, strategies, params, prices"},
	}
}

// strategyInput reads the strategy flags.
func strategyInput(c *cli.Context) plan.StrategyInput {
	return plan.StrategyInput{Config: c.String("config"), Mode: c.String("mode"), ModeSet: c.IsSet("mode"),
		Window: c.Int("window"), WindowSet: c.IsSet("window"), Strategies: c.String("strategies")}
}

// anchorsInput reads --rules, --labels and --evidence.
func anchorsInput(c *cli.Context) plan.AnchorsInput {
	return plan.AnchorsInput{Rules: c.StringSlice("rules"), Labels: c.StringSlice("labels"), Evidence: c.String("evidence")}
}

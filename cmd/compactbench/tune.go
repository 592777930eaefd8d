package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tune"
)

func newTuneCommand() *cli.Command {
	return &cli.Command{
		Name:      "tune",
		Usage:     "sweep rule and strategy parameters over a grid; table of anchor and compaction figures per setting",
		ArgsUsage: "PATH...",
		Description: "Replays the corpus once per setting of the grids given with --set KEY=GRID (the\n" +
			"cartesian product; the last --set varies fastest) and prints and exports (tune.csv,\n" +
			"tune.parquet in --out) one row per setting and strategy: its rule set's precision, recall\n" +
			"and F1 (gold labels when there are, else evidence), synthetic-anchor rates, compactions,\n" +
			"median compression, need recall, invalid contexts and overflows. Rows marked * are the\n" +
			"Pareto front of their strategy: no other setting is at least as good on F1, median\n" +
			"compression and need recall together and better on one.\n\n" +
			"KEY is anchors.threshold (every rule set's confidence threshold), anchors.SET.threshold\n" +
			"(one rule set's), or any strategy parameter run's --set accepts (mask.keep,\n" +
			"codelet.keep_turns, window; see compactbench strategies). GRID is a list (5,10,20) or an\n" +
			"inclusive range FROM:TO:STEP (0.80:0.95:0.05). Files are read again for every setting,\n" +
			"so memory stays that of one run.",
		Flags: slices.Concat([]cli.Flag{
			&cli.GenericFlag{Name: "set", Value: &specList{}, Usage: "a swept parameter, `KEY=GRID` (repeatable)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), Usage: "files read in parallel"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "results/tune", Usage: "output directory"},
			&cli.StringFlag{Name: "format", Value: "table,csv,parquet", Usage: "outputs: table (terminal), csv, parquet"},
			inputFormatFlag(),
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
			&cli.IntFlag{Name: "cv", Usage: "instead of a sweep: fit the rule set's rules to the gold labels with `K`-fold cross-validation by transcript and print the held-out figures beside the trivial baselines"},
			&cli.Float64Flag{Name: "precision-floor", Value: 0.6, Usage: "with --cv: the precision the fitted rules must keep"},
		}, metricFlags(), []cli.Flag{
			rulesFlag, labelsFlag, evidenceFlag,
		}, strategyFlags(), summarizerFlags()),
		Action: tuneAction,
	}
}

// specList collects a repeatable flag's values as given: unlike
// StringSliceFlag it does not split them at commas, which grids use.
type specList struct{ specs []string }

func (l *specList) Set(v string) error { l.specs = append(l.specs, v); return nil }
func (l *specList) String() string     { return strings.Join(l.specs, " ") }

// tuneInput reads the tune command's flags as given.
func tuneInput(c *cli.Context) plan.TuneInput {
	in := plan.TuneInput{
		Paths: c.Args().Slice(), Jobs: c.Int("jobs"), Out: c.String("out"), InputFormat: c.String("input-format"),
		Format: c.String("format"), Quiet: c.Bool("quiet"), Metric: metricInput(c), Anchors: anchorsInput(c),
		Strategy: strategyInput(c), CV: c.Int("cv"), CVSet: c.IsSet("cv"), PrecisionFloor: c.Float64("precision-floor"),
	}
	if l, ok := c.Generic("set").(*specList); ok {
		in.Set = l.specs
	}
	return in
}

// tuneAction resolves the flags (plan.ForTune), then fits (--cv) or
// sweeps with internal/tune and writes the table.
func tuneAction(c *cli.Context) error {
	t, err := plan.ForTune(tuneInput(c))
	if err != nil {
		return err
	}
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	if t.CV != nil {
		docs, _, err := loadGold(t.Paths, t.InputFormat, stderr, t.CV.Labels)
		if err != nil {
			return err
		}
		return tune.GoldCV(stdout, t.CV.Set, docs[0], t.CV.K, t.CV.Floor)
	}
	// One model summarizer (and cache) serves every setting.
	setup, err := summarizerFromFlags(c, compaction.DefaultConfig(), t.Settings[0].Config.Models)
	if err != nil {
		return err
	}
	if err := setup.startAll(c.Context, t.Settings); err != nil {
		return err
	}
	return tuneSweep(c.Context, t, stdout, stderr)
}

// tuneSweep runs the sweep and writes its table.
func tuneSweep(ctx context.Context, t *plan.Tune, stdout, stderr io.Writer) error {
	start := time.Now()
	var progress io.Writer
	if !t.Quiet {
		progress = stderr
	}
	analyze := func(ctx context.Context, cfg *analysis.Config) (*report.Summary, error) {
		return tuneRun(ctx, t.Files, t.Jobs, t.InputFormat, cfg)
	}
	rows, err := tune.Sweep(ctx, t, version, analyze, progress)
	if err != nil {
		return err
	}
	files := t.Formats.Files.CSV || t.Formats.Files.Parquet
	if files {
		if err := writeTune(t.Out, t.Formats.Files, rows); err != nil {
			return err
		}
	}
	if t.Quiet {
		return nil
	}
	if t.Formats.Table {
		if err := report.TuneTable(stdout, rows); err != nil {
			return err
		}
	}
	where := ""
	if files {
		where = "; table in " + t.Out
	}
	fmt.Fprintf(stderr, "tuned %d settings over %d files in %v%s\n", len(t.Settings), len(t.Files),
		time.Since(start).Round(time.Millisecond), where)
	return nil
}

// tuneRun analyses every file with one configuration and aggregates.
func tuneRun(ctx context.Context, files []loader.File, jobs int, inputFormat string, cfg *analysis.Config) (*report.Summary, error) {
	sum := report.NewSummary(report.Meta{Tool: "compactbench"})
	errw := &lockedWriter{w: os.Stderr}
	work := func(ctx context.Context, i int) ([]*analysis.Result, error) {
		return analyzeFile(ctx, files[i].Path, loader.Options{Format: inputFormat}, cfg, errw)
	}
	emit := func(i int, rs []*analysis.Result) error {
		for _, r := range rs {
			sum.Add(r)
		}
		return nil
	}
	if err := loader.Ordered(ctx, len(files), jobs, work, emit); err != nil {
		return nil, err
	}
	sum.Finish()
	if err := sum.Rulers.Err(); err != nil {
		return nil, fmt.Errorf("rulers: %w", err)
	}
	if err := sum.Strategies.Err(); err != nil {
		return nil, err
	}
	return sum, nil
}

// writeTune writes tune.csv and tune.parquet.
func writeTune(dir string, formats report.Formats, rows []report.TuneRow) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	t, err := report.NewTable[report.TuneRow](dir, "tune", formats)
	if err != nil {
		return err
	}
	if err := t.Write(rows...); err != nil {
		t.Abort()
		return err
	}
	return t.Close()
}

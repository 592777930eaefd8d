package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
)

// maxSettings bounds a sweep (the product of the grids).
const maxSettings = 1000

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

// gridAxis is one swept parameter and its values, as given.
type gridAxis struct {
	Key    string
	Values []string
}

// parseGrid reads KEY=GRID: a comma list, or an inclusive FROM:TO:STEP
// range whose values are printed with the inputs' decimals.
func parseGrid(spec string) (gridAxis, error) {
	key, grid, ok := strings.Cut(spec, "=")
	key, grid = strings.TrimSpace(key), strings.TrimSpace(grid)
	if !ok || key == "" || grid == "" {
		return gridAxis{}, fmt.Errorf("--set %s: want KEY=GRID, e.g. anchors.threshold=0.80:0.95:0.05 or mask.keep=5,10,20", spec)
	}
	ax := gridAxis{Key: key}
	if parts := strings.Split(grid, ":"); len(parts) == 3 {
		vals, err := expandRange(parts[0], parts[1], parts[2])
		if err != nil {
			return gridAxis{}, fmt.Errorf("--set %s: %w", spec, err)
		}
		ax.Values = vals
		return ax, nil
	}
	for _, v := range strings.Split(grid, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return gridAxis{}, fmt.Errorf("--set %s: empty value in the list", spec)
		}
		ax.Values = append(ax.Values, v)
	}
	return ax, nil
}

// expandRange lists FROM, FROM+STEP, ... up to TO (included when on the
// grid), computed in units of the finest decimal so 0.1 steps do not drift.
func expandRange(from, to, step string) ([]string, error) {
	dec := 0
	for _, s := range []string{from, to, step} {
		if i := strings.IndexByte(strings.TrimSpace(s), '.'); i >= 0 {
			dec = max(dec, len(strings.TrimSpace(s))-i-1)
		}
	}
	scale := math.Pow(10, float64(dec))
	var n [3]int64
	for i, s := range []string{from, to, step} {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("range %s:%s:%s: %q is not a number", from, to, step, s)
		}
		n[i] = int64(math.Round(f * scale))
	}
	if n[2] <= 0 || n[1] < n[0] {
		return nil, fmt.Errorf("range %s:%s:%s: want FROM ≤ TO and STEP > 0", from, to, step)
	}
	if (n[1]-n[0])/n[2] >= maxSettings {
		return nil, fmt.Errorf("range %s:%s:%s: more than %d values", from, to, step, maxSettings)
	}
	var out []string
	for v := n[0]; v <= n[1]; v += n[2] {
		out = append(out, strconv.FormatFloat(float64(v)/scale, 'f', dec, 64))
	}
	return out, nil
}

// settings is the cartesian product of the axes' values, the last axis
// varying fastest; one empty setting when there is no axis.
func settings(axes []gridAxis) ([][]string, error) {
	total := 1
	for _, a := range axes {
		total *= len(a.Values)
		if total > maxSettings {
			return nil, fmt.Errorf("the grids make more than %d settings", maxSettings)
		}
	}
	out := make([][]string, 0, total)
	idx := make([]int, len(axes))
	for range total {
		s := make([]string, len(axes))
		for i, a := range axes {
			s[i] = a.Values[idx[i]]
		}
		out = append(out, s)
		for i := len(axes) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < len(axes[i].Values) {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// thresholdKey reports whether key sets rule-set thresholds: "" for every
// set, or the set's name.
func thresholdKey(key string) (set string, ok bool) {
	if key == "anchors.threshold" {
		return "", true
	}
	if rest, found := strings.CutPrefix(key, "anchors."); found {
		if name, found := strings.CutSuffix(rest, ".threshold"); found && name != "" {
			return name, true
		}
	}
	return "", false
}

// tuneCV is tune --cv: gold fitting instead of a sweep.
func tuneCV(c *cli.Context, paths, found []string, sweep bool) error {
	k, floor := c.Int("cv"), c.Float64("precision-floor")
	switch {
	case sweep:
		return usageErr("tune --cv fits rules to gold labels; it takes no --set grid")
	case k < 2:
		return usageErr("--cv %d: give at least 2 folds", k)
	case floor < 0 || floor > 1:
		return usageErr("--precision-floor %v: want a number in [0, 1]", floor)
	}
	sets, err := loadRuleSets(c.StringSlice("rules"))
	if err != nil {
		return err
	}
	if len(sets) != 1 {
		return usageErr("tune --cv: give exactly one rule set with --rules (the rules to choose from)")
	}
	labels, err := loadLabelsStrict(found, c.StringSlice("labels"))
	if err != nil {
		return err
	}
	if labels == nil {
		return usageErr("tune --cv: no gold labels (--labels FILE or DIR)")
	}
	docs, _, err := loadGold(paths, c.String("input-format"), c.App.ErrWriter, labels)
	if err != nil {
		return err
	}
	return goldCV(c.App.Writer, sets[0], docs[0], k, floor)
}

// tuneConfig builds the analysis configuration of one setting.
func tuneConfig(c *cli.Context, base analysis.Config, baseAnchors *analysis.AnchorConfig, axes []gridAxis, values []string) (analysis.Config, error) {
	cc, err := compactionBase(c)
	if err != nil {
		return base, err
	}
	thresholds := map[string]float64{} // set name → threshold; "" for all
	for i, a := range axes {
		if set, ok := thresholdKey(a.Key); ok {
			t, err := strconv.ParseFloat(values[i], 64)
			if err != nil {
				return base, usageErr("--set %s=%s: not a number", a.Key, values[i])
			}
			thresholds[set] = t
			continue
		}
		if strings.HasPrefix(a.Key, "anchors.") {
			return base, usageErr("--set %s: the anchor keys are anchors.threshold and anchors.SET.threshold", a.Key)
		}
		if err := cc.Set(a.Key, values[i]); err != nil {
			return base, usageErr("--set %s=%s: %v", a.Key, values[i], err)
		}
	}
	cfg := base
	cfg.Compaction = cc
	if len(thresholds) == 0 || baseAnchors == nil {
		if len(thresholds) > 0 {
			return base, usageErr("--set anchors.*: no rule sets to tune (--rules none)")
		}
		cfg.Anchors = baseAnchors
		return cfg, nil
	}
	if cfg.Anchors, err = withThresholds(baseAnchors, thresholds); err != nil {
		return base, err
	}
	return cfg, nil
}

// withThresholds returns the anchor configuration with rule-set thresholds
// changed: thresholds maps a set's name to its threshold, "" to every set
// not named. A name that is no rule set of the run is a usage error.
func withThresholds(baseAnchors *analysis.AnchorConfig, thresholds map[string]float64) (*analysis.AnchorConfig, error) {
	for name := range thresholds {
		if name == "" {
			continue
		}
		found := false
		for _, s := range baseAnchors.Sets {
			found = found || s.Name == name
		}
		if !found {
			return nil, usageErr("--set anchors.%s.threshold: no rule set %q in this run", name, name)
		}
	}
	sets := make([]*anchors.RuleSet, len(baseAnchors.Sets))
	for i, s := range baseAnchors.Sets {
		t, ok := thresholds[s.Name]
		if !ok && !slices.Contains(anchors.BaselineSets, s.Name) {
			// anchors.threshold moves the rule sets, not the trivial
			// baselines they are compared with
			t, ok = thresholds[""]
		}
		if !ok {
			sets[i] = s
			continue
		}
		var err error
		if sets[i], err = s.WithThreshold(t); err != nil {
			return nil, usageErr("--set: %v", err)
		}
	}
	ac, err := analysis.NewAnchorConfig(sets, baseAnchors.Labels, baseAnchors.Evidence)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return ac, nil
}

func tuneAction(c *cli.Context) error {
	paths := c.Args().Slice()
	if len(paths) == 0 {
		return usageErr("tune: no input paths (try: compactbench tune --set anchors.threshold=0.6:0.9:0.1 corpora/)")
	}
	formats, err := parseFormats(c.String("format"))
	if err != nil {
		return err
	}
	if formats.Files.JSON || formats.Files.Markdown || formats.Files.HTML {
		return usageErr("tune --format: table, csv and parquet only")
	}
	var axes []gridAxis
	var specs []string
	if l, ok := c.Generic("set").(*specList); ok {
		specs = l.specs
	}
	for _, spec := range specs {
		a, err := parseGrid(spec)
		if err != nil {
			return usageErr("%v", err)
		}
		axes = append(axes, a)
	}
	grid, err := settings(axes)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := checkJobs(c.Int("jobs")); err != nil {
		return err
	}
	if err := checkInputFormat(c.String("input-format")); err != nil {
		return err
	}
	inputs, err := loader.Walk(paths)
	if err != nil {
		return usageErr("%v", err)
	}
	if len(inputs.Files) == 0 {
		return usageErr("no transcript files under %s", strings.Join(paths, ", "))
	}
	if c.IsSet("cv") {
		return tuneCV(c, paths, inputs.Labels, len(axes) > 0)
	}
	var base analysis.Config
	// Only the metric ruler is needed: tune reports no ruler errors.
	if err := rulerFlags(&base, c.String("ruler"), c.String("ruler"), c.String("calibration"), "segments"); err != nil {
		return err
	}
	if base.Models, err = loadModels(c.String("models")); err != nil {
		return err
	}
	baseAnchors, _, err := anchorConfig(c.StringSlice("rules"), c.StringSlice("labels"), c.String("evidence"), inputs.Labels)
	if err != nil {
		return err
	}
	// One model summarizer (and cache) serves every setting.
	setup, err := summarizerFromFlags(c, compaction.DefaultConfig(), base.Models)
	if err != nil {
		return err
	}
	if err := setup.start(c.Context, &base); err != nil {
		return err
	}
	// Build every setting's configuration first: a bad value fails before
	// any replay.
	cfgs := make([]analysis.Config, len(grid))
	for i, values := range grid {
		if cfgs[i], err = tuneConfig(c, base, baseAnchors, axes, values); err != nil {
			return err
		}
	}

	start := time.Now()
	var rows []report.TuneRow
	for i, values := range grid {
		t0 := time.Now()
		sum, err := tuneRun(c.Context, inputs.Files, c.Int("jobs"), c.String("input-format"), &cfgs[i])
		if err != nil {
			return err
		}
		params := make([]string, len(axes))
		for k, a := range axes {
			params[k] = a.Key + "=" + values[k]
		}
		rulesOf := map[string]string{}
		for id, p := range cfgs[i].Compaction.Params {
			rulesOf[id] = compaction.RuleSetOf(p)
		}
		paramsFor := func(strategy, ruleSet string) string {
			var out []string
			for k, a := range axes {
				if axisTouches(a.Key, strategy, ruleSet) {
					out = append(out, params[k])
				}
			}
			return strings.Join(out, " ")
		}
		setRows := report.TuneRows(i+1, paramsFor, sum, rulesOf)
		meta := report.Meta{Tool: "compactbench", Version: version, ConfigHash: configHash(&cfgs[i]), Inputs: paths}
		meta.RunID = runID(&meta)
		for k := range setRows {
			setRows[k].RunID, setRows[k].ConfigHash = meta.RunID, meta.ConfigHash
		}
		rows = append(rows, setRows...)
		if !c.Bool("quiet") {
			fmt.Fprintf(c.App.ErrWriter, "setting %d/%d %s: %v\n", i+1, len(grid), strings.Join(params, " "), time.Since(t0).Round(time.Millisecond))
		}
	}
	rows = report.SortTune(report.DedupTune(rows))
	report.MarkPareto(rows)

	out := c.String("out")
	if formats.Files.CSV || formats.Files.Parquet {
		if err := writeTune(out, formats.Files, rows); err != nil {
			return err
		}
	}
	if !c.Bool("quiet") {
		if formats.Table {
			if err := report.TuneTable(c.App.Writer, rows); err != nil {
				return err
			}
		}
		where := ""
		if formats.Files.CSV || formats.Files.Parquet {
			where = "; table in " + out
		}
		fmt.Fprintf(c.App.ErrWriter, "tuned %d settings over %d files in %v%s\n", len(grid), len(inputs.Files),
			time.Since(start).Round(time.Millisecond), where)
	}
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

// axisTouches reports whether a swept key changes what a tune row measures:
// the run-wide keys change every strategy, an anchors key the rows of the
// rule sets it sets, a strategy parameter its strategy.
func axisTouches(key, strategy, ruleSet string) bool {
	if set, ok := thresholdKey(key); ok {
		return ruleSet != "" && (set == "" || set == ruleSet)
	}
	if key == "window" || key == "mode" {
		return strategy != ""
	}
	id, _, _ := strings.Cut(key, ".")
	return strategy != "" && id == strategy
}

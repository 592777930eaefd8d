package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
)

// MaxSettings bounds a sweep (the product of the grids).
const MaxSettings = 1000

// TuneInput is the tune command's flags as given.
type TuneInput struct {
	Paths       []string
	Jobs        int
	Out         string
	InputFormat string
	// Format is --format: table, csv and parquet only.
	Format   string
	Quiet    bool
	Metric   MetricInput
	Anchors  AnchorsInput
	Strategy StrategyInput
	// Set are the swept parameters, KEY=GRID each.
	Set []string
	// CV is --cv K (0 when not given); CVSet says whether it was given.
	CV             int
	CVSet          bool
	PrecisionFloor float64
}

// Tune is a resolved sweep: one analysis configuration per setting of the
// grids, or (CV set) a cross-validated fit of one rule set's rules.
type Tune struct {
	Paths       []string
	Jobs        int
	Out         string
	InputFormat string
	Formats     Formats
	Quiet       bool
	// Files are the transcript files under Paths, in path order.
	Files []loader.File
	Axes  []Axis
	// Settings are the grids' cartesian product, the last axis varying
	// fastest, each with its configuration.
	Settings []Setting
	// CV is the gold fit of tune --cv (nil for a sweep).
	CV *CV
}

// Axis is one swept parameter and its values, as given.
type Axis struct {
	Key    string
	Values []string
}

// Setting is one point of the sweep: a value per axis and the analysis
// configuration they make.
type Setting struct {
	Values []string
	Config analysis.Config
}

// CV is tune --cv: the rule set whose rules are chosen, the gold labels,
// the number of folds and the precision the fitted rules must keep.
type CV struct {
	Set    *anchors.RuleSet
	Labels *anchors.LabelSet
	K      int
	Floor  float64
}

// ForTune resolves the tune command's flags. Every setting's configuration
// is built here, so a bad value fails before any replay.
func ForTune(in TuneInput) (*Tune, error) {
	t := &Tune{Paths: in.Paths, Jobs: in.Jobs, Out: in.Out, InputFormat: in.InputFormat, Quiet: in.Quiet}
	if len(in.Paths) == 0 {
		return nil, bad("", "tune: no input paths (try: compactbench tune --set anchors.threshold=0.6:0.9:0.1 corpora/)")
	}
	var err error
	if t.Formats, err = tuneFormats(in.Format); err != nil {
		return nil, err
	}
	if t.Axes, err = ParseGrids(in.Set); err != nil {
		return nil, err
	}
	grid, err := Product(t.Axes)
	if err != nil {
		return nil, err
	}
	found, err := t.inputs()
	if err != nil {
		return nil, err
	}
	if in.CVSet {
		t.CV, err = cv(in, found, len(t.Axes) > 0)
		return t, err
	}
	base, baseAnchors, err := tuneBase(in, found)
	if err != nil {
		return nil, err
	}
	t.Settings = make([]Setting, len(grid))
	for i, values := range grid {
		t.Settings[i].Values = values
		if t.Settings[i].Config, err = SettingConfig(in.Strategy, base, baseAnchors, t.Axes, values); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// tuneFormats reads tune's --format.
func tuneFormats(s string) (Formats, error) {
	f, err := ParseFormats(s)
	if err != nil {
		return f, err
	}
	if f.Files.JSON || f.Files.Markdown || f.Files.HTML {
		return f, bad("format", "tune --format: table, csv and parquet only")
	}
	return f, nil
}

// inputs checks -j and --input-format and walks the paths; it returns the
// label files found among the inputs.
func (t *Tune) inputs() ([]string, error) {
	if err := Jobs(t.Jobs); err != nil {
		return nil, err
	}
	if err := InputFormat(t.InputFormat); err != nil {
		return nil, err
	}
	inputs, err := loader.Walk(t.Paths)
	if err != nil {
		return nil, bad("", "%v", err)
	}
	if len(inputs.Files) == 0 {
		return nil, bad("", "no transcript files under %s", strings.Join(t.Paths, ", "))
	}
	t.Files = inputs.Files
	return inputs.Labels, nil
}

// tuneBase is what every setting shares: the metric ruler (tune reports
// no ruler errors, so it is the only ruler), the model table and the anchor
// configuration.
func tuneBase(in TuneInput, found []string) (analysis.Config, *analysis.AnchorConfig, error) {
	var base analysis.Config
	if err := Metric(&base, in.Metric, in.Metric.Ruler, "segments"); err != nil {
		return base, nil, err
	}
	baseAnchors, _, err := AnchorConfig(in.Anchors, found)
	return base, baseAnchors, err
}

// cv resolves tune --cv.
func cv(in TuneInput, found []string, sweep bool) (*CV, error) {
	c := &CV{K: in.CV, Floor: in.PrecisionFloor}
	switch {
	case sweep:
		return nil, bad("set", "tune --cv fits rules to gold labels; it takes no --set grid")
	case c.K < 2:
		return nil, bad("cv", "--cv %d: give at least 2 folds", c.K)
	case c.Floor < 0 || c.Floor > 1:
		return nil, bad("precision-floor", "--precision-floor %v: want a number in [0, 1]", c.Floor)
	}
	sets, err := RuleSets(in.Anchors.Rules)
	if err != nil {
		return nil, err
	}
	if len(sets) != 1 {
		return nil, bad("rules", "tune --cv: give exactly one rule set with --rules (the rules to choose from)")
	}
	c.Set = sets[0]
	if c.Labels, err = LabelsStrict(found, in.Anchors.Labels); err != nil {
		return nil, err
	}
	if c.Labels == nil {
		return nil, bad("labels", "tune --cv: no gold labels (--labels FILE or DIR)")
	}
	return c, nil
}

// SettingConfig builds the analysis configuration of one setting: the
// strategies configuration without --set, each axis's value set on it (an
// anchor threshold on the rule sets), and the strategies' rule sets
// resolved.
func SettingConfig(in StrategyInput, base analysis.Config, baseAnchors *analysis.AnchorConfig, axes []Axis, values []string) (analysis.Config, error) {
	cc, err := CompactionBase(in)
	if err != nil {
		return base, err
	}
	thresholds := map[string]float64{} // set name → threshold; "" for all
	for i, a := range axes {
		if _, ok := ThresholdKey(a.Key); ok || strings.HasPrefix(a.Key, "anchors.") {
			if err := addThreshold(thresholds, a.Key, values[i]); err != nil {
				return base, err
			}
			continue
		}
		if err := cc.Set(a.Key, values[i]); err != nil {
			return base, bad("set", "--set %s=%s: %v", a.Key, values[i], err)
		}
	}
	cfg := base
	cfg.Compaction = cc
	if len(thresholds) > 0 && baseAnchors == nil {
		return base, bad("set", "--set anchors.*: no rule sets to tune (--rules none)")
	}
	if cfg.Anchors, err = applyThresholds(baseAnchors, thresholds); err != nil {
		return base, err
	}
	if err := resolveStrategies(&cfg); err != nil {
		return base, err
	}
	return cfg, nil
}

// ParseGrids reads every KEY=GRID.
func ParseGrids(specs []string) ([]Axis, error) {
	var axes []Axis
	for _, spec := range specs {
		a, err := ParseGrid(spec)
		if err != nil {
			return nil, &Error{Flag: "set", Err: err}
		}
		axes = append(axes, a)
	}
	return axes, nil
}

// ParseGrid reads KEY=GRID: a comma list, or an inclusive FROM:TO:STEP
// range whose values are printed with the inputs' decimals.
func ParseGrid(spec string) (Axis, error) {
	key, grid, ok := strings.Cut(spec, "=")
	key, grid = strings.TrimSpace(key), strings.TrimSpace(grid)
	if !ok || key == "" || grid == "" {
		return Axis{}, fmt.Errorf("--set %s: want KEY=GRID, e.g. anchors.threshold=0.80:0.95:0.05 or mask.keep=5,10,20", spec)
	}
	ax := Axis{Key: key}
	if parts := strings.Split(grid, ":"); len(parts) == 3 {
		vals, err := expandRange(parts[0], parts[1], parts[2])
		if err != nil {
			return Axis{}, fmt.Errorf("--set %s: %w", spec, err)
		}
		ax.Values = vals
		return ax, nil
	}
	for _, v := range strings.Split(grid, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return Axis{}, fmt.Errorf("--set %s: empty value in the list", spec)
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
	if (n[1]-n[0])/n[2] >= MaxSettings {
		return nil, fmt.Errorf("range %s:%s:%s: more than %d values", from, to, step, MaxSettings)
	}
	var out []string
	for v := n[0]; v <= n[1]; v += n[2] {
		out = append(out, strconv.FormatFloat(float64(v)/scale, 'f', dec, 64))
	}
	return out, nil
}

// Product is the cartesian product of the axes' values, the last axis
// varying fastest; one empty setting when there is no axis.
func Product(axes []Axis) ([][]string, error) {
	total := 1
	for _, a := range axes {
		total *= len(a.Values)
		if total > MaxSettings {
			return nil, bad("set", "the grids make more than %d settings", MaxSettings)
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

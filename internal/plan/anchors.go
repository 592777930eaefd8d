package plan

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/loader"
)

// RuleSets resolves --rules (built-in names or files); none given means
// the default built-in sets, and "none" means no anchor analysis (nil).
func RuleSets(specs []string) ([]*anchors.RuleSet, error) {
	if len(specs) == 0 {
		return anchors.Defaults(), nil
	}
	if len(specs) == 1 && specs[0] == "none" {
		return nil, nil
	}
	var out []*anchors.RuleSet
	for _, spec := range specs {
		s, err := anchors.Resolve(spec, os.ReadFile)
		if err != nil {
			return nil, bad("rules", "--rules: %v", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Labels reads every label file: those found in the input directories and
// those named by --labels (files, or directories searched for label
// files). A bad line, or a label file that cannot be read, is returned as a
// problem (a problem row of the run) and the other labels are used.
func Labels(found, flagged []string) (*anchors.LabelSet, []anchors.LabelProblem, error) {
	files, err := labelFiles(found, flagged)
	if err != nil || len(files) == 0 {
		return nil, nil, err
	}
	base, err := os.Getwd()
	if err != nil {
		return nil, nil, fmt.Errorf("labels: %w", err)
	}
	set := anchors.NewLabelSetBuilder(base) // one label at a time: a large label file is never held as Labels
	var problems []anchors.LabelProblem
	for i, f := range files {
		if i > 0 && files[i-1] == f {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			problems = append(problems, anchors.LabelProblem{File: f, Reason: fmt.Sprintf("cannot read the label file: %v", err)})
			continue
		}
		problems = append(problems, anchors.ParseLabelsFunc(data, f, set.Add)...)
	}
	return set.Build(), problems, nil
}

// labelFiles lists the label files to read, sorted: found, then each
// --labels file or the label files under each --labels directory.
func labelFiles(found, flagged []string) ([]string, error) {
	files := append([]string(nil), found...)
	for _, p := range flagged {
		info, err := os.Stat(p)
		if err != nil {
			return nil, bad("labels", "--labels: %v", err)
		}
		if !info.IsDir() {
			files = append(files, filepath.ToSlash(filepath.Clean(p)))
			continue
		}
		n := len(files)
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && loader.IsLabelFile(d.Name()) {
				files = append(files, filepath.ToSlash(filepath.Clean(q)))
			}
			return nil
		})
		if err != nil {
			return nil, bad("labels", "--labels: %v", err)
		}
		if len(files) == n {
			return nil, bad("labels", "--labels %s: no labels.jsonl or *.labels.jsonl in it", p)
		}
	}
	sort.Strings(files)
	return files, nil
}

// LabelsStrict is Labels for commands that score labels and nothing else
// (agree, tune --cv): a label line that cannot be used is a usage error
// naming its file and line, not a problem row.
func LabelsStrict(found, flagged []string) (*anchors.LabelSet, error) {
	set, problems, err := Labels(found, flagged)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, bad("labels", "%s (%d label line(s) cannot be used)", problems[0], len(problems))
	}
	return set, nil
}

// AnchorConfig builds the anchor configuration of a run (nil with --rules
// none). The label lines that could not be used are returned as problems.
func AnchorConfig(in AnchorsInput, foundLabels []string) (*analysis.AnchorConfig, []anchors.LabelProblem, error) {
	sets, err := RuleSets(in.Rules)
	if err != nil || sets == nil {
		return nil, nil, err
	}
	kinds, err := anchors.ParseEvidenceKinds(in.Evidence)
	if err != nil {
		return nil, nil, bad("evidence", "--evidence: %v", err)
	}
	labels, problems, err := Labels(foundLabels, in.Labels)
	if err != nil {
		return nil, nil, err
	}
	if labels != nil {
		sets = withBaselines(sets)
	}
	ac, err := analysis.NewAnchorConfig(sets, labels, kinds)
	if err != nil {
		return nil, nil, bad("rules", "--rules: %v", err)
	}
	return ac, problems, nil
}

// withBaselines appends the trivial baseline rule sets (every turn, any
// successful edit) that are not already there: wherever a gold F1 is shown,
// it is shown beside theirs.
func withBaselines(sets []*anchors.RuleSet) []*anchors.RuleSet {
	for _, name := range anchors.BaselineSets {
		have := false
		for _, s := range sets {
			have = have || s.Name == name
		}
		if !have {
			b, err := anchors.Builtin(name)
			if err != nil {
				panic(err) // embedded
			}
			sets = append(sets, b)
		}
	}
	return sets
}

// ThresholdKey reports whether a --set key sets rule-set thresholds: ""
// for every set (anchors.threshold), or the set's name
// (anchors.SET.threshold).
func ThresholdKey(key string) (set string, ok bool) {
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

// Thresholds reads the --set values that set rule-set thresholds
// (anchors.threshold, anchors.SET.threshold): rule-set name ("" for every
// set) → threshold. Other anchors.* keys are usage errors.
func Thresholds(sets []string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := addThreshold(out, k, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addThreshold adds key=value to thresholds when key is a threshold key.
func addThreshold(thresholds map[string]float64, key, value string) error {
	set, ok := ThresholdKey(key)
	if !ok {
		if strings.HasPrefix(key, "anchors.") {
			return bad("set", "--set %s: the anchor keys are anchors.threshold and anchors.SET.threshold", key)
		}
		return nil
	}
	t, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return bad("set", "--set %s=%s: not a number", key, value)
	}
	thresholds[set] = t
	return nil
}

// applyThresholds is WithThresholds when there are thresholds; they need
// rule sets.
func applyThresholds(ac *analysis.AnchorConfig, thresholds map[string]float64) (*analysis.AnchorConfig, error) {
	if len(thresholds) == 0 {
		return ac, nil
	}
	if ac == nil {
		return nil, bad("set", "--set anchors.*: no rule sets in this run (--rules none)")
	}
	return WithThresholds(ac, thresholds)
}

// WithThresholds returns the anchor configuration with rule-set thresholds
// changed: thresholds maps a set's name to its threshold, "" to every set
// not named (but the trivial baselines). A name that is no rule set of the
// run is a usage error.
func WithThresholds(base *analysis.AnchorConfig, thresholds map[string]float64) (*analysis.AnchorConfig, error) {
	for name := range thresholds {
		if name == "" {
			continue
		}
		found := false
		for _, s := range base.Sets {
			found = found || s.Name == name
		}
		if !found {
			return nil, bad("set", "--set anchors.%s.threshold: no rule set %q in this run", name, name)
		}
	}
	sets := make([]*anchors.RuleSet, len(base.Sets))
	for i, s := range base.Sets {
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
			return nil, bad("set", "--set: %v", err)
		}
	}
	ac, err := analysis.NewAnchorConfig(sets, base.Labels, base.Evidence)
	if err != nil {
		return nil, bad("set", "%v", err)
	}
	return ac, nil
}

// resolveStrategies resolves the enabled strategies, their parameters and
// the rule sets they name into cfg, once for the whole run.
func resolveStrategies(cfg *analysis.Config) error {
	var err error
	if cfg.RuleSets, err = StrategyRuleSets(cfg); err != nil {
		return err
	}
	cfg.Strategies = analysis.ResolveStrategies(cfg.Compaction)
	return nil
}

// StrategyRuleSets resolves the rule set every enabled strategy names in
// its `rules` parameter: one of the run's rule sets (--rules) or a
// built-in. A name that is neither is a usage error naming the --set key,
// so a replay never meets an unknown name (it would find no anchors).
func StrategyRuleSets(cfg *analysis.Config) (map[string]*anchors.RuleSet, error) {
	c := cfg.Compaction
	if c == nil {
		return nil, nil
	}
	known := map[string]*anchors.RuleSet{}
	if cfg.Anchors != nil {
		for _, s := range cfg.Anchors.Sets {
			known[s.Name] = s
		}
	}
	out := map[string]*anchors.RuleSet{}
	for _, s := range compaction.Specs() {
		p, ok := c.Params[s.ID]
		if !ok {
			continue
		}
		name := compaction.RuleSetOf(p)
		if name == "" {
			continue
		}
		if rs, ok := known[name]; ok {
			out[name] = rs
			continue
		}
		rs, err := anchors.Builtin(name)
		if err != nil {
			return nil, bad("set", "--set %s.rules: %v", s.ID, err)
		}
		out[name] = rs
	}
	return out, nil
}

package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/loader"
	"github.com/compactbench/compactbench/internal/report"
)

// Flags shared by run and inspect.
var (
	rulesFlag = &cli.StringSliceFlag{Name: "rules", Usage: "rule set to evaluate: a built-in name (" +
		strings.Join(anchors.DefaultSets, ", ") + ") or a YAML file; repeatable (default: every built-in set; none: no anchor analysis)"}
	labelsFlag = &cli.StringSliceFlag{Name: "labels", Usage: "gold label file (JSONL) or directory of them; repeatable. " +
		"labels.jsonl and NAME.labels.jsonl inside input directories are read too"}
	evidenceFlag = &cli.StringFlag{Name: "evidence", Value: "all", Usage: "evidence labels to score against: " +
		"all, none, or a list of todo, commit, test-fix, compaction"}
)

// loadRuleSets resolves --rules (built-in names or files); none given means
// the default built-in sets, and "none" means no anchor analysis.
func loadRuleSets(specs []string) ([]*anchors.RuleSet, error) {
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
			return nil, usageErr("--rules: %v", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// loadLabels reads every label file: those found in the input directories
// and those named by --labels (files, or directories searched for label
// files). A bad line, or a label file that cannot be read, is returned as a
// problem (a problem row of the run) and the other labels are used.
func loadLabels(found, flagged []string) (*anchors.LabelSet, []anchors.LabelProblem, error) {
	files := append([]string(nil), found...)
	for _, p := range flagged {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, usageErr("--labels: %v", err)
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
			return nil, nil, usageErr("--labels: %v", err)
		}
		if len(files) == n {
			return nil, nil, usageErr("--labels %s: no labels.jsonl or *.labels.jsonl in it", p)
		}
	}
	if len(files) == 0 {
		return nil, nil, nil
	}
	sort.Strings(files)
	var all []anchors.Label
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
		ls, bad := anchors.ParseLabelsLenient(data, f)
		problems = append(problems, bad...)
		all = append(all, ls...)
	}
	base, err := os.Getwd()
	if err != nil {
		return nil, nil, fmt.Errorf("labels: %w", err)
	}
	return anchors.NewLabelSet(all, base), problems, nil
}

// anchorConfig builds the anchor configuration of a run.
// The label lines that could not be used are returned as problems.
func anchorConfig(rules, labelPaths []string, evidence string, foundLabels []string) (*analysis.AnchorConfig, []anchors.LabelProblem, error) {
	sets, err := loadRuleSets(rules)
	if err != nil || sets == nil {
		return nil, nil, err
	}
	kinds, err := anchors.ParseEvidenceKinds(evidence)
	if err != nil {
		return nil, nil, usageErr("--evidence: %v", err)
	}
	labels, problems, err := loadLabels(foundLabels, labelPaths)
	if err != nil {
		return nil, nil, err
	}
	if labels != nil {
		sets = withBaselines(sets)
	}
	ac, err := analysis.NewAnchorConfig(sets, labels, kinds)
	if err != nil {
		return nil, nil, usageErr("--rules: %v", err)
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

// warnUnmatchedLabels tells the user about labels that named no transcript
// of the run (a typo in a label file would otherwise go unnoticed).
func warnUnmatchedLabels(w io.Writer, ls *anchors.LabelSet, ids, paths []string) {
	un := ls.Unmatched(ids, paths)
	if len(un) == 0 {
		return
	}
	fmt.Fprintf(w, "compactbench: warning: %d label(s) name no transcript of this run, e.g. %s:%d %q\n",
		len(un), un[0].File, un[0].Line, un[0].Transcript)
}

func newRulesCommand() *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "list and print anchor rule sets",
		Description: "Rule sets are YAML files (see `rules show codelet` for a commented example).\n" +
			"Copy one, edit it, and pass it with --rules FILE to run or inspect.",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the built-in rule sets",
				Action: func(c *cli.Context) error {
					return rulesList(c.App.Writer)
				},
			},
			{
				Name:      "show",
				Usage:     "print a rule set's YAML (built-in name or file)",
				ArgsUsage: "NAME|FILE",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("rules show: give one rule set name or file")
					}
					s, err := anchors.Resolve(c.Args().First(), os.ReadFile)
					if err != nil {
						return usageErr("%v", err)
					}
					_, err = c.App.Writer.Write(s.Source)
					return err
				},
			},
		},
	}
}

func rulesList(w io.Writer) error {
	var rows [][]string
	for _, n := range anchors.BuiltinNames() {
		s, err := anchors.Builtin(n)
		if err != nil {
			return err
		}
		below := 0
		for _, r := range s.Rules {
			if r.BelowThreshold(s) {
				below++
			}
		}
		syn := "none"
		if s.Synthetic != nil {
			syn = string(s.Synthetic.Type)
		}
		rows = append(rows, []string{n, fmt.Sprint(s.Threshold), fmt.Sprint(len(s.Rules)), fmt.Sprint(below), syn, s.Description})
	}
	return report.RenderLeft(w, []string{"name", "threshold", "rules", "below threshold", "synthetic", "description"}, rows, 60)
}

// loadLabelsStrict is loadLabels for commands that score labels and nothing
// else (agree, tune --cv): a label line that cannot be used is a usage error
// naming its file and line, not a problem row.
func loadLabelsStrict(found, flagged []string) (*anchors.LabelSet, error) {
	set, problems, err := loadLabels(found, flagged)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, usageErr("%s (%d label line(s) cannot be used)", problems[0], len(problems))
	}
	return set, nil
}

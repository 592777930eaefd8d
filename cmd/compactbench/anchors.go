package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/anchors"
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

// warnUnmatchedLabels tells the user about labels that named no transcript
// of the run (a typo in a label file would otherwise go unnoticed).
func warnUnmatchedLabels(w io.Writer, m *anchors.Matches) {
	un := m.Unmatched()
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

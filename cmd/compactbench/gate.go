package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/report"
)

func newGateCommand() *cli.Command {
	var figures strings.Builder
	for _, f := range report.GateFigures {
		dir := "rise"
		if f.HigherBetter {
			dir = "drop"
		}
		fmt.Fprintf(&figures, "  %-22s per %-8s may %s by %v: %s\n", f.Name, f.Scope, dir, f.Default, f.Doc)
	}
	return &cli.Command{
		Name:  "gate",
		Usage: "compare a run's summary.json with a baseline; exit 1 on a regression",
		Description: "Compares every gated figure of the current summary.json with the baseline's and prints a\n" +
			"Markdown table (fit for a CI step summary) with ✓ or ✗ per figure. Exit 0: no regression;\n" +
			"1: a figure worsened beyond its tolerance, or a strategy, ruler or rule set of the baseline\n" +
			"is missing; 2: unusable input (a missing or invalid file, a schema mismatch, a bad tolerance).\n\n" +
			"Tolerances (absolute worsening allowed; defaults below) come from --tolerances FILE (YAML:\n" +
			"`need_recall: 0.03`, `evidence_f1: off`, `strategies: {mask: {low_compression_share: off}}`)\n" +
			"and then --tolerance KEY=VALUE flags (KEY is a figure, or STRATEGY.FIGURE).\n\n" + figures.String(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "baseline", Aliases: []string{"b"}, Usage: "the baseline summary.json (required; e.g. results/baseline.json)"},
			&cli.StringFlag{Name: "current", Aliases: []string{"c"}, Value: "results/latest/summary.json", Usage: "the run to check"},
			&cli.StringFlag{Name: "tolerances", Usage: "tolerances file (YAML)"},
			&cli.StringSliceFlag{Name: "tolerance", Aliases: []string{"t"}, Usage: "override one tolerance, `FIGURE=VALUE` or STRATEGY.FIGURE=VALUE (a number, or off); repeatable"},
		},
		Action: gateAction,
	}
}

// gateAction reads the tolerances and both summaries, prints the gate's
// table and fails when a figure regressed.
func gateAction(c *cli.Context) error {
	if c.String("baseline") == "" {
		return usageErr("gate: --baseline FILE is required (the committed one is results/baseline.json)")
	}
	if c.NArg() > 0 {
		return usageErr("gate takes no arguments (got %s); use --baseline and --current", strings.Join(c.Args().Slice(), " "))
	}
	tol, err := gateTolerances(c.String("tolerances"), c.StringSlice("tolerance"))
	if err != nil {
		return err
	}
	base, err := readSummary(c.String("baseline"))
	if err != nil {
		return err
	}
	cur, err := readSummary(c.String("current"))
	if err != nil {
		return err
	}
	g := report.Gate(base, cur, tol)
	if err := report.WriteGateMarkdown(c.App.Writer, g, c.String("baseline"), c.String("current"), base, cur); err != nil {
		return err
	}
	if n := g.Failures(); n > 0 {
		return failErr("gate: %d of %d figures regressed", n, len(g.Checks))
	}
	return nil
}

// gateTolerances are the default tolerances, then those of the
// --tolerances file (when path is not ""), then each --tolerance KEY=VALUE.
func gateTolerances(path string, overrides []string) (*report.Tolerances, error) {
	tol := report.DefaultTolerances()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usageErr("--tolerances: %v", err)
		}
		if tol, err = report.ParseTolerances(data, path); err != nil {
			return nil, usageErr("--tolerances: %v", err)
		}
	}
	for _, kv := range overrides {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageErr("--tolerance %s: want FIGURE=VALUE", kv)
		}
		if err := tol.Set(strings.TrimSpace(k), v); err != nil {
			return nil, usageErr("--tolerance: %v", err)
		}
	}
	return tol, nil
}

func readSummary(path string) (*report.Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	s, err := report.ReadSummary(data, path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return s, nil
}

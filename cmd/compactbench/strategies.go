package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/plan"
)

func newStrategiesCommand() *cli.Command {
	return &cli.Command{
		Name:  "strategies",
		Usage: "list the compaction strategies and their parameters",
		Description: "Prints each strategy's id, source and parameters as YAML. With --config, the\n" +
			"parameters are the file's; copy the output into a strategies file to change them.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "strategies file (YAML) to show instead of the defaults"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := plan.CompactionConfig(c.String("config"))
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "# mode: %s, window: %s\nparams:\n", cfg.Mode, windowText(cfg.Window))
			for _, s := range compaction.Specs() {
				fmt.Fprintf(w, "  # %s (%s): %s\n  %s:\n", s.ID, s.Source, s.Doc, s.ID)
				for _, line := range strings.Split(strings.TrimRight(compaction.ParamsYAML(cfg.Params[s.ID]), "\n"), "\n") {
					fmt.Fprintf(w, "    %s\n", line)
				}
			}
			return nil
		},
	}
}

func windowText(w int) string {
	if w == 0 {
		return "each model's own"
	}
	return fmt.Sprint(w)
}

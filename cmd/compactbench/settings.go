package main

import (
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
)

// reportSettings describes a run's configuration for report.md and
// report.html: what a reader needs to know to interpret the figures.
func reportSettings(cfg *analysis.Config) []report.Setting {
	cc := cfg.Compaction
	if cc == nil {
		cc = compaction.DefaultConfig()
	}
	window := "each model's own"
	if cc.Window > 0 {
		window = strconv.Itoa(cc.Window) + " tokens (override)"
	}
	var ids []string
	for _, s := range cc.Enabled() {
		ids = append(ids, s.ID)
	}
	metric := cfg.Ruler
	if metric == "" {
		metric = tokens.Calibrated
	}
	rulers := cfg.RulerNames
	if len(rulers) == 0 {
		rulers = tokens.DefaultNames()
	}
	out := []report.Setting{
		{Name: "mode", Value: cc.Mode.String()},
		{Name: "window", Value: window},
		{Name: "strategies", Value: strings.Join(ids, ", ")},
		{Name: "metric ruler", Value: metric},
		{Name: "rulers measured", Value: strings.Join(rulers, ", ")},
	}
	if a := cfg.Anchors; a != nil {
		var sets []string
		for _, s := range a.Sets {
			sets = append(sets, s.Name+" ("+s.Origin+")")
		}
		out = append(out, report.Setting{Name: "rule sets", Value: strings.Join(sets, ", ")})
		labels := "no gold labels"
		if a.Labels != nil {
			labels = strconv.Itoa(a.Labels.Len()) + " gold label lines"
		}
		evidence := "no evidence labels"
		if len(a.Evidence) > 0 {
			var kinds []string
			for _, k := range a.Evidence {
				kinds = append(kinds, string(k))
			}
			evidence = "evidence: " + strings.Join(kinds, ", ")
		}
		out = append(out, report.Setting{Name: "labels", Value: labels + "; " + evidence})
	}
	return out
}

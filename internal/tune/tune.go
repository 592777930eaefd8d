// Package tune is compactbench's tuning logic, apart from the command line:
// a sweep replays the corpus once per setting of a resolved plan (the
// caller supplies how one configuration is analysed, so the package does
// no I/O) and tabulates each setting's figures with its Pareto front; the
// gold fit chooses a rule set's rules by cross-validation and prints the
// held-out figures beside the trivial baselines.
package tune

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/plan"
	"github.com/compactbench/compactbench/internal/report"
)

// Analyze analyses every file of the sweep with one configuration and
// returns the aggregate.
type Analyze func(ctx context.Context, cfg *analysis.Config) (*report.Summary, error)

// Sweep runs every setting of t with analyze and returns the table: one
// row per setting and strategy (and rule set), deduplicated, sorted, with
// each strategy's Pareto front marked. version stamps each setting's run
// id; a line per setting goes to progress (nil: none).
func Sweep(ctx context.Context, t *plan.Tune, version string, analyze Analyze, progress io.Writer) ([]report.TuneRow, error) {
	var rows []report.TuneRow
	for i := range t.Settings {
		t0 := time.Now()
		s := &t.Settings[i]
		sum, err := analyze(ctx, &s.Config)
		if err != nil {
			return nil, err
		}
		params := paramsOf(t.Axes, s.Values)
		rows = append(rows, settingRows(i+1, t, s, params, sum, version)...)
		if progress != nil {
			fmt.Fprintf(progress, "setting %d/%d %s: %v\n", i+1, len(t.Settings), strings.Join(params, " "), time.Since(t0).Round(time.Millisecond))
		}
	}
	rows = report.SortTune(report.DedupTune(rows))
	markFront(rows)
	return rows, nil
}

// paramsOf renders a setting's values as KEY=VALUE, one per axis.
func paramsOf(axes []plan.Axis, values []string) []string {
	params := make([]string, len(axes))
	for k, a := range axes {
		params[k] = a.Key + "=" + values[k]
	}
	return params
}

// settingRows are one setting's rows, stamped with its run id and
// configuration hash; each row lists the swept parameters that change it.
func settingRows(n int, t *plan.Tune, s *plan.Setting, params []string, sum *report.Summary, version string) []report.TuneRow {
	rulesOf := map[string]string{}
	for _, st := range s.Config.Strategies {
		rulesOf[st.Spec.ID] = st.RuleSet
	}
	paramsFor := func(strategy, ruleSet string) string {
		var out []string
		for k, a := range t.Axes {
			if AxisTouches(a.Key, strategy, ruleSet) {
				out = append(out, params[k])
			}
		}
		return strings.Join(out, " ")
	}
	rows := figures(n, paramsFor, sum, rulesOf)
	meta := report.Meta{Tool: "compactbench", Version: version, ConfigHash: plan.ConfigHash(&s.Config), Inputs: t.Paths}
	meta.RunID = plan.RunID(&meta)
	for k := range rows {
		rows[k].RunID, rows[k].ConfigHash = meta.RunID, meta.ConfigHash
	}
	return rows
}

// figures and markFront are the one place tune asks for its figures and
// objectives: a row's strategy figures are the figure registry's tune
// columns (generated into report.TuneRow) and the Pareto objectives are
// the registry's (F1, median compression, need recall).
func figures(setting int, paramsFor func(strategy, ruleSet string) string, sum *report.Summary, rulesOf map[string]string) []report.TuneRow {
	return report.TuneRows(setting, paramsFor, sum, rulesOf)
}

// markFront marks each strategy's Pareto front (see figures).
func markFront(rows []report.TuneRow) { report.MarkPareto(rows) }

// AxisTouches reports whether a swept key changes what a tune row measures:
// the run-wide keys change every strategy, an anchors key the rows of the
// rule sets it sets, a strategy parameter its strategy.
func AxisTouches(key, strategy, ruleSet string) bool {
	if set, ok := plan.ThresholdKey(key); ok {
		return ruleSet != "" && (set == "" || set == ruleSet)
	}
	if key == "window" || key == "mode" {
		return strategy != ""
	}
	id, _, _ := strings.Cut(key, ".")
	return strategy != "" && id == strategy
}

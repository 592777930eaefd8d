package report

import (
	"io"
)

// TuneTable renders the tune rows for the terminal.
func TuneTable(w io.Writer, rows []TuneRow) error {
	header := []string{"setting", "strategy", "rule set", "thr", "labels", "P", "R", "F1", "synthetic (set)", "synthetic (events)",
		"compactions", "median compression", "need recall", "cost (fit)", "invalid", "overflows", "front"}
	var out [][]string
	for i := range rows {
		r := &rows[i]
		thr := "-"
		if r.Threshold != nil {
			thr = FormatFloat(*r.Threshold)
		}
		strategy, comp := r.Strategy, itoa(r.Compactions)
		if strategy == "" {
			strategy, comp = "(rule set only)", "-"
		}
		front := ""
		if r.Pareto {
			front = "*"
		}
		params := r.Params
		if params == "" {
			params = "(not swept)"
		}
		out = append(out, []string{params, strategy, dash(r.RuleSet), thr, dash(r.Labels), ratio(r.Precision), ratio(r.Recall),
			ratio(r.F1), pct(r.SetSyntheticRate), pct(r.SyntheticAnchorRate), comp, pct(r.MedianCompression), pct(r.NeedRecall), ratio(r.CostRatio), itoa(r.InvalidContexts), itoa(r.Overflows), front})
	}
	return RenderLeft(w, header, out, 0)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

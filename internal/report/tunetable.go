package report

import (
	"io"

	"github.com/compactbench/compactbench/internal/figures"
)

// TuneTable renders the tune rows for the terminal: the setting, the rule
// set's figures, then one column per strategy figure the registry gives a
// tune column (in its rank order, as in tune.csv), and the front. A rule
// set no strategy uses has no strategy figures ("-").
func TuneTable(w io.Writer, rows []TuneRow) error {
	cols := figures.TuneColumns()
	header := []string{"setting", "strategy", "rule set", "thr", "labels", "P", "R", "F1", "synthetic (set)"}
	for _, f := range cols {
		header = append(header, f.Tune.Header)
	}
	header = append(header, "front")
	var out [][]string
	for i := range rows {
		out = append(out, tuneCells(&rows[i], cols))
	}
	return RenderLeft(w, header, out, 0)
}

// tuneCells is one row of the tune table.
func tuneCells(r *TuneRow, cols []figures.Figure) []string {
	thr := "-"
	if r.Threshold != nil {
		thr = FormatFloat(*r.Threshold)
	}
	strategy := r.Strategy
	if strategy == "" {
		strategy = "(rule set only)"
	}
	params := r.Params
	if params == "" {
		params = "(not swept)"
	}
	row := []string{params, strategy, dash(r.RuleSet), thr, dash(r.Labels), ratio(r.Precision), ratio(r.Recall),
		ratio(r.F1), pct(r.SetSyntheticRate)}
	for i := range cols {
		row = append(row, tuneCell(r, &cols[i]))
	}
	front := ""
	if r.Pareto {
		front = "*"
	}
	return append(row, front)
}

// tuneCell prints a row's strategy figure in its unit's format.
func tuneCell(r *TuneRow, f *figures.Figure) string {
	v := r.Value(f.Tune.Column)
	switch {
	case r.Strategy == "" || v == nil:
		return "-"
	case f.Unit == figures.Count:
		return itoa(int64(*v))
	case f.Unit == figures.Share:
		return pct(v)
	}
	return ratio(v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

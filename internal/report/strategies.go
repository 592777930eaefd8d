package report

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
)

// StrategyTable renders the per-strategy table for a terminal: the deciding
// figures within 100 columns, or every figure when wide.
func StrategyTable(w io.Writer, s *Summary, wide bool) error {
	header, rows := strategyGridNarrow(s)
	legend := strategyLegendNarrow
	if note := baselineNote(s); note != "" {
		legend += " " + note
	}
	if wide {
		header, rows = strategyGrid(s)
		legend = strategyLegend
	}
	if len(rows) == 0 {
		return nil
	}
	if err := RenderTable(w, header, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, strings.Join(wrap(legend, 100, ""), "\n")+"\n")
	return err
}

// VerdictText writes the verdict, wrapped at 100 columns.
func VerdictText(w io.Writer, s *Summary) error {
	lines := verdictText(s, 100)
	if len(lines) == 0 {
		return nil
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// anchorF1 is the F1 of a strategy's rule set: against gold labels, else
// against evidence labels (nil without labels or rule set).
func anchorF1(s *Summary, st *StrategyStats) *float64 {
	if st.Label(figures.RuleSetName) == "" {
		return nil
	}
	rs := ruleSet(s, st.Label(figures.RuleSetName))
	if rs == nil {
		return nil
	}
	if v := f1(rs.Gold); v != nil {
		return v
	}
	return f1(rs.Evidence)
}

// baselineNote puts the F1 column beside the two trivial detectors scored
// on the same labels (gold where the run has gold labels, else evidence)
// and names the rule sets that do not beat "any turn with a successful
// edit"; "" when the run scored no baseline.
func baselineNote(s *Summary) string {
	every, edit := ruleSet(s, anchors.BaselineEveryTurnSet), ruleSet(s, anchors.BaselineAnyEditSet)
	if every == nil || edit == nil {
		return ""
	}
	kind, e, x := "gold", every.Gold, edit.Gold
	if f1(e) == nil || f1(x) == nil {
		kind, e, x = "evidence", every.Evidence, edit.Evidence
	}
	if f1(e) == nil || f1(x) == nil {
		return ""
	}
	note := "Trivial detectors on the same " + kind + " labels: every turn is an anchor F1 " + ratio(f1(e)) +
		", any turn with a successful edit F1 " + ratio(f1(x)) + "."
	var below []string
	for _, a := range s.Anchors {
		if a.BelowAnyEdit != nil && *a.BelowAnyEdit && !slices.Contains(anchors.BaselineSets, a.Name) {
			below = append(below, a.Name)
		}
	}
	if len(below) > 0 {
		note += " Not above any-edit on gold: " + strings.Join(below, ", ") + "."
	}
	return note
}

// fits is "fit/runs".
func fits(st *StrategyStats) string {
	return itoa(st.Count(figures.FitRuns)) + "/" + itoa(st.Count(figures.Runs))
}

// costCell is the cost ratio over the fitting runs with their number.
func costCell(st *StrategyStats) string {
	return ratio(st.Value(figures.CostRatio)) + " (" + itoa(st.Count(figures.FitRuns)) + ")"
}

// strategyGridNarrow is the terminal's default table: the figures that
// decide, within 100 columns.
func strategyGridNarrow(s *Summary) ([]string, [][]string) {
	header := []string{"strategy", "fits", "events", "compr.", "need rec.", "err rec.", "F1", "cost (n)"}
	var rows [][]string
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		rows = append(rows, []string{spec.ID, fits(st), itoa(st.Count(figures.Compactions)), pct0Or(st.Value(figures.MedianCompression)),
			pct0Or(st.Value(figures.NeedRecall)), pct0Or(st.Value(figures.MedianErrorRecall)), ratio(anchorF1(s, st)), costCell(st)})
	}
	return header, rows
}

const strategyLegendNarrow = "fits: sessions with no call over the window / sessions replayed. events: compactions. " +
	"compr.: median compression per compaction. need rec.: facts needed later that the compacted context kept, pooled " +
	"over compactions. err rec.: median error recall per compaction. F1: the strategy's anchor rule set against gold " +
	"labels (evidence labels where there are none). cost (n): simulated bill over the bill without compaction, pooled " +
	"over the n sessions that fit the window. --wide shows every figure."

// strategyGrid is the per-strategy table with every figure (strategies in
// compaction.Specs order), shared by --wide and the reports: one column per
// figure the registry gives a column, in its order.
func strategyGrid(s *Summary) ([]string, [][]string) {
	cols := figures.Columns()
	header := []string{"strategy"}
	for _, f := range cols {
		header = append(header, f.Column)
	}
	var rows [][]string
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		row := []string{spec.ID}
		for i := range cols {
			row = append(row, figureCell(s, st, &cols[i]))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// figureCell prints one strategy figure in its unit's format.
func figureCell(s *Summary, st *StrategyStats, f *figures.Figure) string {
	if f.Name == figures.AnchorF1 {
		return ratio(anchorF1(s, st))
	}
	switch f.Unit {
	case figures.Label:
		return dash(st.Label(f.Name))
	case figures.Count:
		return itoa(st.Count(f.Name))
	case figures.Share:
		return pct(st.Value(f.Name))
	case figures.USD:
		return strconv.FormatFloat(st.Float(f.Name), 'f', 2, 64)
	case figures.Tokens:
		if v := st.Value(f.Name); v != nil {
			return FormatFloat(*v)
		}
		return "-"
	}
	return ratio(st.Value(f.Name))
}

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
	legend := strategyLegendNarrow()
	if note := baselineNote(s); note != "" {
		legend += " " + note
	}
	if wide {
		header, rows = strategyGrid(s)
		legend = strategyLegend()
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

// strategyGridNarrow is the terminal's default table: the figures that
// decide, within 100 columns, one column per figure the registry gives a
// Brief, in its rank order.
func strategyGridNarrow(s *Summary) ([]string, [][]string) {
	cols := figures.Briefs()
	header := []string{"strategy"}
	for _, f := range cols {
		header = append(header, f.Brief.Header)
	}
	var rows [][]string
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		row := []string{spec.ID}
		for i := range cols {
			row = append(row, briefCell(s, st, &cols[i]))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// briefCell prints one figure of the default table: shares as whole
// percentages, then the count it is of ("9/12") or over ("1.000 (9)").
func briefCell(s *Summary, st *StrategyStats, f *figures.Figure) string {
	var v string
	if f.Unit == figures.Share {
		v = pct0Or(st.Value(f.Name))
	} else {
		v = figureCell(s, st, f)
	}
	if f.Brief.Of != "" {
		v += "/" + itoa(st.Count(f.Brief.Of))
	}
	if f.Brief.N != "" {
		v += " (" + itoa(st.Count(f.Brief.N)) + ")"
	}
	return v
}

// strategyLegendNarrow explains the default table: each column's header
// and its figure's caption.
func strategyLegendNarrow() string {
	var parts []string
	for _, f := range figures.Briefs() {
		text := f.Brief.Header + ": " + f.Caption
		if f.Brief.Of != "" {
			text += " / " + caption(f.Brief.Of)
		}
		if f.Brief.N != "" {
			text += "; n: " + caption(f.Brief.N)
		}
		parts = append(parts, text+".")
	}
	return strings.Join(parts, " ") + " --wide shows every figure."
}

// strategyLegend explains the wide table (terminal --wide, report.md and
// report.html): each column's header and its figure's caption.
func strategyLegend() string {
	var parts []string
	for _, f := range figures.Columns() {
		parts = append(parts, f.Column+": "+f.Caption+".")
	}
	return strings.Join(parts, " ")
}

// caption is a registered figure's caption.
func caption(name string) string {
	f, _ := figures.Lookup(name)
	return f.Caption
}

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

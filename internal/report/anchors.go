package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
)

// rulesSink writes the rules table when closed, from the per-rule-set
// counts the summary sums (summary.json's anchors section and report.html
// read the same tally): its rows are corpus aggregates, not per transcript.
type rulesSink struct {
	t     *Table[analysis.RuleRow]
	tally *anchors.Tally
	stamp stamper[analysis.RuleRow]
}

func openRules(o Options, s *Summary) (sink, error) {
	t, err := NewTable[analysis.RuleRow](o.Dir, "rules", o.Formats)
	if err != nil {
		return nil, err
	}
	return &rulesSink{t: t, tally: s.AnchorTally(), stamp: newStamper[analysis.RuleRow](o.Meta)}, nil
}

// add does nothing: Summary.add tallies the result's counts.
func (s *rulesSink) add(*analysis.Result) error { return nil }

func (s *rulesSink) Close() error {
	rows := analysis.RuleRows(s.tally)
	s.stamp.rows(rows)
	if err := s.t.Write(rows...); err != nil {
		s.t.Abort()
		return err
	}
	return s.t.Close()
}

func (s *rulesSink) Abort() { s.t.Abort() }

// RenderLeft writes a text table with left-aligned cells; cells wider than
// maxWidth wrap (0: no limit).
func RenderLeft(w io.Writer, header []string, rows [][]string, maxWidth int) error {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
	}
	if maxWidth > 0 {
		opts = append(opts, tablewriter.WithRowMaxWidth(maxWidth), tablewriter.WithRowAutoWrap(tw.WrapNormal))
	}
	return render(w, header, rows, opts...)
}

// AnchorsTable renders the per-rule-set anchor figures of a run.
func AnchorsTable(w io.Writer, s *Summary) error {
	if len(s.Anchors) == 0 {
		return nil
	}
	header, rows := anchorsGrid(s)
	return RenderTable(w, header, rows)
}

// anchorsGrid is the per-rule-set table's header and rows.
func anchorsGrid(s *Summary) ([]string, [][]string) {
	header := []string{"rule set", "threshold", "turns", "anchors", "no-anchor rate", "synthetic rate",
		"gold P", "gold R", "gold F1", "evidence P", "evidence R", "evidence F1"}
	gold := false
	for _, a := range s.Anchors {
		gold = gold || a.Gold != nil
	}
	if gold {
		header = append(header, "gold recall ER/TC/UC/FM")
	}
	var rows [][]string
	for _, a := range s.Anchors {
		name := a.Name
		if a.BelowAnyEdit != nil && *a.BelowAnyEdit {
			name += " ⚠ ≤ any edit"
		}
		row := []string{name, FormatFloat(a.Threshold), itoa(a.Turns), itoa(a.Anchors), pct(a.NoAnchorRate), pct(a.SyntheticRate)}
		for _, ls := range []*LabelScores{a.Gold, a.Evidence} {
			if ls == nil {
				row = append(row, "-", "-", "-")
				continue
			}
			row = append(row, ratio(ls.Precision), ratio(ls.Recall), ratio(ls.F1))
		}
		if gold {
			var parts []string
			for _, tr := range a.GoldRecallByType {
				parts = append(parts, fmt.Sprintf("%d/%d", tr.Found, tr.Labelled))
			}
			cell := strings.Join(parts, " ")
			if cell == "" {
				cell = "-"
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return header, rows
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(100**v, 'f', 1, 64) + "%"
}

func ratio(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

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
	return &rulesSink{t: t, tally: &s.anchorTally, stamp: newStamper[analysis.RuleRow](o.Meta)}, nil
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

// RuleSetSummary is one rule set's aggregate in summary.json.
type RuleSetSummary struct {
	Name      string  `json:"name"`
	Origin    string  `json:"origin"`
	Hash      string  `json:"hash"`
	Threshold float64 `json:"threshold"`
	// Transcripts and Turns evaluated; WithTurns counts transcripts with at
	// least one turn.
	Transcripts int64 `json:"transcripts"`
	WithTurns   int64 `json:"transcripts_with_turns"`
	Turns       int64 `json:"turns"`
	Anchors     int64 `json:"anchors"`
	// SyntheticAnchors counts transcripts given the synthetic fallback
	// anchor; SyntheticRate = SyntheticAnchors / WithTurns.
	SyntheticAnchors int64    `json:"synthetic_anchors"`
	SyntheticRate    *float64 `json:"synthetic_rate"`
	// NoAnchorRate is the share of transcripts with turns where no rule
	// fired (what the fallback, if any, had to cover).
	NoAnchorRate *float64     `json:"no_anchor_rate"`
	Gold         *LabelScores `json:"gold"`
	Evidence     *LabelScores `json:"evidence"`
	// GoldRecallByType is the gold recall per anchor type ("found/labelled"
	// counts and the ratio), nil without gold labels.
	GoldRecallByType []TypeRecall `json:"gold_recall_by_type"`
	// BelowAnyEdit: the set's gold F1 does not beat the trivial baseline
	// "any turn with a successful edit" on the same labels (null when
	// either F1 is undefined).
	BelowAnyEdit *bool `json:"below_any_edit"`
}

// TypeRecall is the gold recall of one anchor type.
type TypeRecall struct {
	Type     string   `json:"type"`
	Found    int64    `json:"found"`
	Labelled int64    `json:"labelled"`
	Recall   *float64 `json:"recall"`
}

// LabelScores are a rule set's figures against one label source (all
// types; a detected anchor matches a label on the same turn).
type LabelScores struct {
	Transcripts   int64    `json:"transcripts"`
	LabelledTurns int64    `json:"labelled_turns"`
	TP            int64    `json:"tp"`
	FP            int64    `json:"fp"`
	FN            int64    `json:"fn"`
	Precision     *float64 `json:"precision"`
	Recall        *float64 `json:"recall"`
	F1            *float64 `json:"f1"`
}

func labelScores(transcripts, turns int, s anchors.Score) *LabelScores {
	if transcripts == 0 {
		return nil
	}
	ls := &LabelScores{Transcripts: int64(transcripts), LabelledTurns: int64(turns), TP: int64(s.TP), FP: int64(s.FP), FN: int64(s.FN)}
	if v, ok := s.Precision(); ok {
		ls.Precision = &v
	}
	if v, ok := s.Recall(); ok {
		ls.Recall = &v
	}
	if v, ok := s.F1(); ok {
		ls.F1 = &v
	}
	return ls
}

// anchorSummaries renders the tally for summary.json.
func anchorSummaries(t *anchors.Tally) []RuleSetSummary {
	var out []RuleSetSummary
	for _, c := range t.Sets {
		s := RuleSetSummary{Name: c.Set, Origin: c.RuleSet.Origin, Hash: c.RuleSet.Hash(), Threshold: c.RuleSet.Threshold,
			Transcripts: int64(c.Transcripts), WithTurns: int64(c.WithTurns), Turns: int64(c.Turns),
			Anchors: int64(c.Anchors), SyntheticAnchors: int64(c.Synthetic),
			Gold:     labelScores(c.GoldTranscripts, c.GoldTurns, c.All.Gold),
			Evidence: labelScores(c.EvidenceTranscripts, c.EvidenceTurns, c.All.Evidence),
		}
		if s.Gold != nil {
			for k, t := range anchors.Types {
				g := c.ByType[k].Gold
				tr := TypeRecall{Type: string(t), Found: int64(g.TP), Labelled: int64(g.TP + g.FN)}
				if v, ok := g.Recall(); ok {
					tr.Recall = &v
				}
				s.GoldRecallByType = append(s.GoldRecallByType, tr)
			}
		}
		if c.WithTurns > 0 {
			sr := float64(c.Synthetic) / float64(c.WithTurns)
			nr := float64(c.NoNatural) / float64(c.WithTurns)
			s.SyntheticRate, s.NoAnchorRate = &sr, &nr
		}
		out = append(out, s)
	}
	var edit *float64
	for _, s := range out {
		if s.Name == anchors.BaselineAnyEditSet && s.Gold != nil {
			edit = s.Gold.F1
		}
	}
	for i := range out {
		if g := out[i].Gold; g != nil && g.F1 != nil && edit != nil && out[i].Name != anchors.BaselineAnyEditSet {
			below := *g.F1 <= *edit
			out[i].BelowAnyEdit = &below
		}
	}
	return out
}

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

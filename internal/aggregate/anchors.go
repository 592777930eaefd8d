package aggregate

import (
	"github.com/compactbench/compactbench/internal/anchors"
)

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

package analysis

import (
	"fmt"
	"strings"

	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/transcript"
)

// AnchorConfig says which rule sets detect anchors and what they are scored
// against. Build it with NewAnchorConfig.
type AnchorConfig struct {
	// Sets are the rule sets, in output order (names are unique).
	Sets []*anchors.RuleSet `json:"rule_sets"`
	// Labels are the gold labels; nil when no label file was given.
	Labels *anchors.LabelSet `json:"labels,omitempty"`
	// Evidence are the evidence label kinds scored; empty: no evidence
	// scoring.
	Evidence []anchors.EvidenceKind `json:"evidence"`

	suite *anchors.Suite
}

// NewAnchorConfig compiles the rule sets into one suite. Set names must be
// unique.
func NewAnchorConfig(sets []*anchors.RuleSet, labels *anchors.LabelSet, evidence []anchors.EvidenceKind) (*AnchorConfig, error) {
	seen := map[string]string{}
	for _, s := range sets {
		if o, dup := seen[s.Name]; dup {
			return nil, fmt.Errorf("two rule sets are named %q (%s and %s); rename one", s.Name, o, s.Origin)
		}
		seen[s.Name] = s.Origin
	}
	if evidence == nil {
		evidence = []anchors.EvidenceKind{}
	}
	return &AnchorConfig{Sets: sets, Labels: labels, Evidence: evidence, suite: anchors.NewSuite(sets...)}, nil
}

// AnchorRow is a row of the anchors table: one per detected anchor
// (natural, or the synthetic fallback) per rule set, over the whole
// transcript's turns.
type AnchorRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string  `parquet:"run_id" json:"run_id"`
	ConfigHash   string  `parquet:"config_hash" json:"config_hash"`
	Path         string  `parquet:"path" json:"path"`
	TranscriptID string  `parquet:"transcript_id" json:"transcript_id"`
	RuleSet      string  `parquet:"rule_set" json:"rule_set"`
	Turn         int64   `parquet:"turn" json:"turn"`
	Type         string  `parquet:"type" json:"type"`
	Rule         string  `parquet:"rule" json:"rule"`
	Weight       float64 `parquet:"weight" json:"weight"`
	Confidence   float64 `parquet:"confidence" json:"confidence"`
	Synthetic    bool    `parquet:"synthetic" json:"synthetic"`
	Description  string  `parquet:"description" json:"description"`
	// Labelled says whether the transcript has gold labels.
	Labelled bool `parquet:"labelled" json:"labelled"`
	// MatchedLabel lists the types of the gold labels on the anchor's turn
	// ("a;b"), empty when none.
	MatchedLabel string `parquet:"matched_label" json:"matched_label"`
	// MatchedEvidence lists the evidence kinds on the anchor's turn.
	MatchedEvidence string `parquet:"matched_evidence" json:"matched_evidence"`
}

// LabelRow is a row of the labels table: one per gold label and per
// evidence label, with the rule sets that put an anchor on its turn.
type LabelRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID        string `parquet:"run_id" json:"run_id"`
	ConfigHash   string `parquet:"config_hash" json:"config_hash"`
	Path         string `parquet:"path" json:"path"`
	TranscriptID string `parquet:"transcript_id" json:"transcript_id"`
	// Source is gold or evidence.
	Source string `parquet:"source" json:"source"`
	// Kind is the evidence kind (todo, commit, test-fix, compaction), or
	// the label file and line of a gold label.
	Kind string `parquet:"kind" json:"kind"`
	Turn int64  `parquet:"turn" json:"turn"`
	Type string `parquet:"type" json:"type"`
	Note string `parquet:"note" json:"note"`
	// DetectedBy lists "set:rule" for each rule set with an anchor on the
	// turn (rule "synthetic" for the fallback).
	DetectedBy string `parquet:"detected_by" json:"detected_by"`
}

// scoredForEvidence says whether a transcript kind gets evidence labels:
// compaction-summarizer calls and side questions repeat a session's records
// and are left out.
func scoredForEvidence(k transcript.Kind) bool {
	return k != transcript.KindCompactionCall && k != transcript.KindSideQuestion
}

// analyzeAnchors fills the anchor rows, label rows and per-set counts from
// the suite's evaluations of the turns.
func analyzeAnchors(t *transcript.Transcript, turns []transcript.Turn, evs []*anchors.Evaluation, ac *AnchorConfig, r *Result) {
	n := len(turns)
	gold, goldTruth, goldAt, labelled := goldLabels(t, turns, ac, r)
	evidence, evTruth, evAt := evidenceLabels(t, turns, ac)

	detected := make([][]string, n)
	for _, e := range evs {
		f := e.Detect(0, n)
		for _, a := range f.Anchors {
			r.Anchors = append(r.Anchors, AnchorRow{
				Path: t.Path, TranscriptID: t.ID, RuleSet: e.Set.Name, Turn: int64(a.Turn), Type: string(a.Type),
				Rule: a.Rule, Weight: a.Weight, Confidence: a.Confidence, Synthetic: a.Synthetic,
				Description: a.Description, Labelled: labelled,
				MatchedLabel: strings.Join(goldAt[a.Turn], ";"), MatchedEvidence: strings.Join(evAt[a.Turn], ";"),
			})
			detected[a.Turn] = append(detected[a.Turn], e.Set.Name+":"+a.Rule)
		}
		r.AnchorCounts = append(r.AnchorCounts, anchors.Count(e, goldTruth, evTruth))
	}
	for _, l := range gold {
		row := LabelRow{Path: t.Path, TranscriptID: t.ID, Source: "gold", Kind: fmt.Sprintf("%s:%d", l.File, l.Line),
			Turn: int64(l.Turn), Type: string(l.Type), Note: l.Note}
		row.DetectedBy = strings.Join(detected[l.Turn], ";")
		r.Labels = append(r.Labels, row)
	}
	for _, e := range evidence {
		r.Labels = append(r.Labels, LabelRow{Path: t.Path, TranscriptID: t.ID, Source: "evidence", Kind: string(e.Kind),
			Turn: int64(e.Turn), Type: string(e.Type), Note: e.Note, DetectedBy: strings.Join(detected[e.Turn], ";")})
	}
}

// goldLabels are t's gold labels placed on their turns, their truth (nil
// when t is unlabelled) and the label types per turn. A label is scored
// only on the turn its prompt names; one that cannot be placed is a problem
// row of r, never scored elsewhere.
func goldLabels(t *transcript.Transcript, turns []transcript.Turn, ac *AnchorConfig, r *Result) ([]anchors.Label, *anchors.Truth, [][]string, bool) {
	gold, labelled := ac.Labels.For(t.ID, t.Path)
	goldAt := make([][]string, len(turns))
	if !labelled {
		return gold, nil, goldAt, false
	}
	var bad []anchors.LabelProblem
	gold, bad = anchors.ResolveLabels(gold, turns)
	for _, b := range bad {
		r.Problems = append(r.Problems, ProblemRow{Path: t.Path, TranscriptID: t.ID,
			Reason: "label " + b.String()})
	}
	truth := anchors.NewTruth(len(turns))
	for _, l := range gold {
		truth.Add(l.Turn, l.Type)
		goldAt[l.Turn] = appendUnique(goldAt[l.Turn], string(l.Type))
	}
	return gold, truth, goldAt, true
}

// evidenceLabels are t's evidence labels, their truth and the evidence kinds
// per turn. Evidence is positive-only: a transcript without any (a chat
// without TodoWrite, commits or compactions) says nothing about its turns,
// so it is left out of evidence scoring (nil truth), as unlabelled
// transcripts are of gold scoring.
func evidenceLabels(t *transcript.Transcript, turns []transcript.Turn, ac *AnchorConfig) ([]anchors.Evidence, *anchors.Truth, [][]string) {
	var evidence []anchors.Evidence
	evAt := make([][]string, len(turns))
	if len(ac.Evidence) > 0 && scoredForEvidence(t.Kind) {
		evidence = anchors.DeriveEvidence(t, turns, ac.Evidence)
	}
	if len(evidence) == 0 {
		return evidence, nil, evAt
	}
	truth := anchors.NewTruth(len(turns))
	for _, e := range evidence {
		truth.Add(e.Turn, e.Type)
		evAt[e.Turn] = appendUnique(evAt[e.Turn], string(e.Kind))
	}
	return evidence, truth, evAt
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// RuleRow is a row of the rules table: per rule set, one row for the whole
// set, one per anchor type, one per rule and one for the synthetic
// fallback. Precision, recall and F1 are empty (null) when undefined: no
// labels of that source, or nothing detected.
type RuleRow struct {
	// RunID and ConfigHash identify the run (filled by the table writer),
	// so the tables of several runs can be unioned.
	RunID      string `parquet:"run_id" json:"run_id"`
	ConfigHash string `parquet:"config_hash" json:"config_hash"`
	RuleSet    string `parquet:"rule_set" json:"rule_set"`
	// Scope is set, type, rule or synthetic.
	Scope string `parquet:"scope" json:"scope"`
	// Rule is the rule's name (rule scope), "synthetic", or "*".
	Rule string `parquet:"rule" json:"rule"`
	// Type is the anchor type (rule, type and synthetic scopes).
	Type       string   `parquet:"type" json:"type"`
	Weight     *float64 `parquet:"weight,optional" json:"weight"`
	Confidence *float64 `parquet:"confidence,optional" json:"confidence"`
	Threshold  float64  `parquet:"threshold" json:"threshold"`
	// BelowThreshold: the rule's confidence is under the set's threshold,
	// so it can never fire (fires is 0 whatever matches says).
	BelowThreshold bool `parquet:"below_threshold" json:"below_threshold"`
	// Matches counts turns where the conditions held (set scope: where any
	// rule's did); empty for type and synthetic rows.
	Matches        *int64   `parquet:"matches,optional" json:"matches"`
	Fires          int64    `parquet:"fires" json:"fires"`
	TurnsEvaluated int64    `parquet:"turns_evaluated" json:"turns_evaluated"`
	LabelledTurns  int64    `parquet:"labelled_turns" json:"labelled_turns"`
	TP             int64    `parquet:"tp" json:"tp"`
	FP             int64    `parquet:"fp" json:"fp"`
	FN             int64    `parquet:"fn" json:"fn"`
	Precision      *float64 `parquet:"precision,optional" json:"precision"`
	Recall         *float64 `parquet:"recall,optional" json:"recall"`
	F1             *float64 `parquet:"f1,optional" json:"f1"`
	EvidenceTurns  int64    `parquet:"evidence_turns" json:"evidence_turns"`
	EvidenceTP     int64    `parquet:"evidence_tp" json:"evidence_tp"`
	EvidenceFP     int64    `parquet:"evidence_fp" json:"evidence_fp"`
	EvidenceFN     int64    `parquet:"evidence_fn" json:"evidence_fn"`
	EvidencePrec   *float64 `parquet:"evidence_precision,optional" json:"evidence_precision"`
	EvidenceRecall *float64 `parquet:"evidence_recall,optional" json:"evidence_recall"`
	EvidenceF1     *float64 `parquet:"evidence_f1,optional" json:"evidence_f1"`
}

// RuleRows turns summed counts into rules-table rows, set by set.
func RuleRows(t *anchors.Tally) []RuleRow {
	var rows []RuleRow
	for _, c := range t.Sets {
		s := c.RuleSet
		base := RuleRow{RuleSet: c.Set, Threshold: s.Threshold, TurnsEvaluated: int64(c.Turns),
			LabelledTurns: int64(c.GoldTurns), EvidenceTurns: int64(c.EvidenceTurns)}
		fill := func(row RuleRow, sc anchors.Scores, gold, ev bool) RuleRow {
			if gold {
				row.TP, row.FP, row.FN = int64(sc.Gold.TP), int64(sc.Gold.FP), int64(sc.Gold.FN)
				row.Precision, row.Recall, row.F1 = rates(sc.Gold)
			}
			if ev {
				row.EvidenceTP, row.EvidenceFP, row.EvidenceFN = int64(sc.Evidence.TP), int64(sc.Evidence.FP), int64(sc.Evidence.FN)
				row.EvidencePrec, row.EvidenceRecall, row.EvidenceF1 = rates(sc.Evidence)
			}
			return row
		}
		gold, ev := c.GoldTranscripts > 0, c.EvidenceTranscripts > 0

		row := base
		row.Scope, row.Rule = "set", "*"
		row.Matches = i64p(c.MatchedTurns)
		row.Fires = int64(c.Anchors)
		rows = append(rows, fill(row, c.All, gold, ev))

		for k, typ := range anchors.Types {
			row := base
			row.Scope, row.Rule, row.Type = "type", "*", string(typ)
			row.Fires = int64(c.TypeAnchors[k])
			rows = append(rows, fill(row, c.ByType[k], gold, ev))
		}
		for i, rule := range s.Rules {
			row := base
			row.Scope, row.Rule, row.Type = "rule", rule.Name, string(rule.Type)
			row.Weight, row.Confidence = f64p(rule.Weight), f64p(rule.Confidence)
			row.BelowThreshold = rule.BelowThreshold(s)
			row.Matches = i64p(c.Rules[i].Matches)
			row.Fires = int64(c.Rules[i].Fires)
			rows = append(rows, fill(row, c.Rules[i].Scores, gold, ev))
		}
		if sp := s.Synthetic; sp != nil {
			row := base
			row.Scope, row.Rule, row.Type = "synthetic", anchors.SyntheticRule, string(sp.Type)
			row.Weight, row.Confidence = f64p(sp.Weight), f64p(sp.Confidence)
			row.Fires = int64(c.Synthetic)
			rows = append(rows, fill(row, c.SyntheticScore, gold, ev))
		}
	}
	return rows
}

// rates returns precision, recall and F1, nil where undefined.
func rates(s anchors.Score) (p, r, f *float64) {
	if v, ok := s.Precision(); ok {
		p = f64p(v)
	}
	if v, ok := s.Recall(); ok {
		r = f64p(v)
	}
	if v, ok := s.F1(); ok {
		f = f64p(v)
	}
	return
}

func f64p(v float64) *float64 { return &v }
func i64p(v int) *int64       { n := int64(v); return &n }

package aggregate

import (
	"reflect"
	"strings"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
)

// The tune table's strategy figure columns (TuneFigures) are generated
// from the figure registry.
//go:generate go run ./gentune

// NewSummary starts an aggregate without files (tune keeps one per
// setting); Add and Finish are what the Writer does with it.
func NewSummary(m Meta) *Summary {
	s := newSummary(m)
	return &s
}

// Add aggregates one result.
func (s *Summary) Add(r *analysis.Result) { s.add(r) }

// Finish computes the aggregates that need every result.
func (s *Summary) Finish() { s.finish() }

// TuneRow is a row of the tune table: one setting of the swept parameters
// and one strategy (or one rule set no strategy uses). Anchor figures are
// the strategy's rule set's; precision, recall and F1 are against the
// labels named in labels (gold when the corpus has gold labels for the set,
// else evidence).
type TuneRow struct {
	// RunID and ConfigHash identify the setting's run (each setting has
	// its own configuration), as in every other table.
	RunID      string `parquet:"run_id" json:"run_id"`
	ConfigHash string `parquet:"config_hash" json:"config_hash"`
	Setting    int64  `parquet:"setting" json:"setting"`
	// Params is the setting: "anchors.threshold=0.8 mask.keep=5".
	Params   string `parquet:"params" json:"params"`
	Strategy string `parquet:"strategy" json:"strategy"`
	RuleSet  string `parquet:"rule_set" json:"rule_set"`
	// Threshold is the rule set's confidence threshold in this setting.
	Threshold *float64 `parquet:"threshold,optional" json:"threshold"`
	// TuneFigures are the strategy's figures, generated from the figure
	// registry (tunefigures.go): compactions, overflows, median
	// compression, need recall and the others with a tune column.
	TuneFigures
	// SetSyntheticRate is the share of transcripts the rule set gave the
	// synthetic fallback.
	SetSyntheticRate *float64 `parquet:"set_synthetic_rate,optional" json:"set_synthetic_rate"`
	Anchors          *int64   `parquet:"anchors,optional" json:"anchors"`
	Labels           string   `parquet:"labels" json:"labels"`
	Precision        *float64 `parquet:"precision,optional" json:"precision"`
	Recall           *float64 `parquet:"recall,optional" json:"recall"`
	F1               *float64 `parquet:"f1,optional" json:"f1"`
	// Pareto marks the settings no other setting of the same strategy (or
	// rule set) beats on F1, median compression and need recall together.
	Pareto bool `parquet:"pareto" json:"pareto"`
}

// TuneRows turns one setting's aggregate into rows: one per strategy run,
// in compaction.Specs order, then one per rule set no strategy named.
// rulesOf gives the rule set each strategy uses ("" for none); params gives
// a row's setting in words: the swept parameters that affect its strategy
// (or rule set), so rows of settings that differ only elsewhere are equal
// and DedupTune drops them.
func TuneRows(setting int, params func(strategy, ruleSet string) string, s *Summary, rulesOf map[string]string) []TuneRow {
	var rows []TuneRow
	used := map[string]bool{}
	for _, spec := range compaction.Specs() {
		st := s.Strategies[spec.ID]
		if st == nil {
			continue
		}
		r := TuneRow{Setting: int64(setting), Params: params(spec.ID, rulesOf[spec.ID]), Strategy: spec.ID}
		r.fill(st)
		if name := rulesOf[spec.ID]; name != "" {
			used[name] = true
			if rs := RuleSet(s, name); rs != nil {
				fillAnchors(&r, rs)
			} else {
				r.RuleSet = name
			}
		}
		rows = append(rows, r)
	}
	for i := range s.Anchors {
		if rs := &s.Anchors[i]; !used[rs.Name] {
			r := TuneRow{Setting: int64(setting), Params: params("", rs.Name)}
			fillAnchors(&r, rs)
			rows = append(rows, r)
		}
	}
	return rows
}

func fillAnchors(r *TuneRow, rs *RuleSetSummary) {
	r.RuleSet = rs.Name
	r.Threshold = f64p(rs.Threshold)
	r.SetSyntheticRate = rs.SyntheticRate
	n := rs.Anchors
	r.Anchors = &n
	ls := rs.Gold
	r.Labels = "gold"
	if ls == nil || ls.LabelledTurns == 0 {
		ls, r.Labels = rs.Evidence, "evidence"
	}
	if ls == nil {
		r.Labels = ""
		return
	}
	r.Precision, r.Recall, r.F1 = ls.Precision, ls.Recall, ls.F1
}

func f64p(v float64) *float64 { return &v }

// tuneGroup is what the Pareto front is computed within.
func tuneGroup(r *TuneRow) string {
	if r.Strategy != "" {
		return "s:" + r.Strategy
	}
	return "r:" + r.RuleSet
}

// MarkPareto sets Pareto on the rows of each group (a strategy, or a rule
// set without one) that no other row of the group dominates on the
// registry's Pareto objectives (F1, median compression, need recall): at
// least as good on each, and better on one. A missing figure counts as
// worse than any value.
func MarkPareto(rows []TuneRow) {
	objs := figures.ParetoObjectives()
	obj := func(r *TuneRow) []float64 {
		out := make([]float64, len(objs))
		for k := range objs {
			out[k] = -1e308
			if p := r.Value(objs[k].Tune.Column); p != nil {
				out[k] = *p
				if objs[k].Better == figures.Lower {
					out[k] = -*p
				}
			}
		}
		return out
	}
	for i := range rows {
		a := obj(&rows[i])
		rows[i].Pareto = true
		for j := range rows {
			if i != j && tuneGroup(&rows[i]) == tuneGroup(&rows[j]) && dominates(obj(&rows[j]), a) {
				rows[i].Pareto = false
				break
			}
		}
	}
}

// dominates reports whether b is at least as good as a everywhere and
// better somewhere.
func dominates(b, a []float64) bool {
	geq, gt := true, false
	for k := range a {
		geq = geq && b[k] >= a[k]
		gt = gt || b[k] > a[k]
	}
	return geq && gt
}

// tuneColumns maps a tune column (its json name) to its field's index
// path (the generated figures are an embedded struct).
var tuneColumns = func() map[string][]int {
	m := map[string][]int{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[TuneRow]()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && !f.Anonymous {
			m[name] = f.Index
		}
	}
	return m
}()

// Value is the row's value of a numeric tune column: an integer column as a
// float, nil when the figure is undefined or there is no such column.
func (r *TuneRow) Value(column string) *float64 {
	i, ok := tuneColumns[column]
	if !ok {
		return nil
	}
	switch p := reflect.ValueOf(r).Elem().FieldByIndex(i).Interface().(type) {
	case *float64:
		return p
	case int64:
		v := float64(p)
		return &v
	}
	return nil
}

// DedupTune keeps the first row of each strategy (or rule set) and
// setting of the parameters that affect it: a strategy the sweep does not
// touch appears once.
func DedupTune(rows []TuneRow) []TuneRow {
	seen := map[string]bool{}
	out := rows[:0:0]
	for i := range rows {
		k := tuneGroup(&rows[i]) + "\x00" + rows[i].Params
		if !seen[k] {
			seen[k] = true
			out = append(out, rows[i])
		}
	}
	return out
}

// SortTune orders rows by group (strategies in Specs order, then rule
// sets as they came) and setting, so each strategy's sweep reads down.
func SortTune(rows []TuneRow) []TuneRow {
	var order []string
	seen := map[string]bool{}
	for i := range rows {
		if g := tuneGroup(&rows[i]); !seen[g] {
			seen[g] = true
			order = append(order, g)
		}
	}
	out := make([]TuneRow, 0, len(rows))
	for _, g := range order {
		for i := range rows {
			if tuneGroup(&rows[i]) == g {
				out = append(out, rows[i])
			}
		}
	}
	return out
}

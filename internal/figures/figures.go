// Package figures is the registry of compactbench's aggregate figures: each
// figure is defined once (name, unit, per-replay or per-event computation,
// aggregation, which way is better, caption, and whether the gate compares
// it and the wide strategy table shows it). summary.json's strategies, the
// gate's figures, the strategy tables (the terminal's default and wide
// tables, report.md and report.html) with their legends, and tune's
// columns and Pareto objectives derive from it. The package is pure: no I/O.
//
// Adding a figure is one entry in registry (registry.go) plus its
// computation and a test; docs/metrics.md must define its name.
package figures

import (
	"fmt"

	"github.com/compactbench/compactbench/internal/analysis"
)

// Scope is what a figure is per.
type Scope string

// The scopes.
const (
	Strategy Scope = "strategy"
	Ruler    Scope = "ruler"
	RuleSet  Scope = "rule set"
	Corpus   Scope = "corpus"
)

// Unit says what a value is and how tables print it.
type Unit int

// The units.
const (
	// Count is an integer (printed as one, exact in JSON).
	Count Unit = iota
	// Share is a fraction in [0, 1], printed as a percentage.
	Share
	// Ratio is a dimensionless ratio, printed with three decimals.
	Ratio
	// Tokens is a token count that may be fractional (a median).
	Tokens
	// USD is a sum of money, printed with two decimals.
	USD
	// Label is a string (not a number).
	Label
)

// Agg is how a figure's per-item values become the aggregate.
type Agg int

// The aggregations.
const (
	// Sum adds the values over the items that have one; always defined.
	Sum Agg = iota
	// Median is the median over the items that have a value; undefined
	// over none.
	Median
	// Pooled is Num over Den (two other figures of the same set); undefined
	// when Den is not positive.
	Pooled
	// Total adds the Parts (other figures of the same set).
	Total
	// Last keeps the last item's label.
	Last
	// External figures are computed outside this package (ruler errors,
	// rule-set F1, corpus totals); the registry only describes them.
	External
)

// Better says which way a figure improves.
type Better int

// The directions.
const (
	Neither Better = iota
	Higher
	Lower
)

// Gate marks a figure the gate compares with the baseline.
type Gate struct {
	// Rank orders the gated figures (in the gate's table and help).
	Rank int
	// Tolerance is the default absolute worsening allowed.
	Tolerance float64
}

// Figure is one registered figure.
type Figure struct {
	// Name is the summary.json key and the gate's name for the figure.
	Name  string
	Scope Scope
	Unit  Unit
	Agg   Agg
	// Better is the improving direction (the gate and Pareto fronts use it).
	Better Better
	// Caption says what the figure is, in one line: the gate's help and
	// every strategy table's legend print it after the column's header.
	Caption string
	// Run or Event computes the per-item value of a Sum or Median figure:
	// ok false when the item has none. Label figures use RunLabel.
	Run      func(*analysis.RunRow) (v float64, ok bool)
	Event    func(*analysis.EventRow) (v float64, ok bool)
	RunLabel func(*analysis.RunRow) string
	// Num and Den name the figures a Pooled figure divides.
	Num, Den string
	// Parts name the figures a Total adds.
	Parts []string
	// Hidden figures are tallies that summary.json does not carry.
	Hidden bool
	// Gate, when set, makes the gate compare the figure.
	Gate *Gate
	// Tune, when set, makes the figure a column of tune's table.
	Tune *TuneCol
	// Column is the header of the figure's column in the wide strategy
	// table ("" for none); Col orders the columns.
	Column string
	Col    int
	// Brief, when set, shows the figure in the terminal's default
	// strategy table.
	Brief *Brief
}

// Brief places a figure in the terminal's default strategy table, which
// shows the deciding figures within 100 columns: the figures with a Brief,
// by rank. Its cell is printed short (shares as whole percentages); its
// legend entry is the header and the figure's caption.
type Brief struct {
	// Rank orders the default table's columns.
	Rank int
	// Header is the column's short header.
	Header string
	// Of, when set, prints the cell as "value/of", a count against the
	// count (another figure) it is part of.
	Of string
	// N, when set, prints the cell as "value (n)", with n the named count
	// the value is over.
	N string
}

// TuneCol makes a figure a column of tune's table (CSV, Parquet and
// terminal).
type TuneCol struct {
	// Column is the CSV and Parquet column name (and the JSON key).
	Column string
	// Header is the column's header in the terminal table.
	Header string
	// Rank orders the strategy figure columns of tune's table, which are
	// generated from the registry (internal/aggregate/tunefigures.go); 0
	// for a column the row's rule set fills (anchor F1).
	Rank int
	// Pareto makes the figure one of the objectives of tune's Pareto
	// fronts.
	Pareto bool
}

// Count reports whether the figure is an integer.
func (f *Figure) Count() bool { return f.Unit == Count }

// HigherBetter reports whether a rise is an improvement.
func (f *Figure) HigherBetter() bool { return f.Better == Higher }

var index = func() map[string]int {
	m := make(map[string]int, len(registry))
	for i := range registry {
		f := &registry[i]
		if _, dup := m[f.Name]; dup {
			panic("figures: duplicate figure " + f.Name)
		}
		m[f.Name] = i
	}
	return m
}()

// All returns every registered figure in summary.json order.
func All() []Figure { return append([]Figure(nil), registry...) }

// Lookup returns the named figure.
func Lookup(name string) (*Figure, bool) {
	i, ok := index[name]
	if !ok {
		return nil, false
	}
	return &registry[i], true
}

// must returns the named figure or panics: for names the code spells.
func must(name string) int {
	i, ok := index[name]
	if !ok {
		panic(fmt.Sprintf("figures: unknown figure %q", name))
	}
	return i
}

// Gated returns the gated figures in gate rank order.
func Gated() []Figure {
	return sorted(func(f *Figure) int {
		if f.Gate == nil {
			return 0
		}
		return f.Gate.Rank
	})
}

// ParetoObjectives returns the figures tune's Pareto fronts compare, in
// registry order.
func ParetoObjectives() []Figure {
	var out []Figure
	for i := range registry {
		if t := registry[i].Tune; t != nil && t.Pareto {
			out = append(out, registry[i])
		}
	}
	return out
}

// TuneColumns returns the strategy figures tune's table carries as
// generated columns, in rank order.
func TuneColumns() []Figure {
	return sorted(func(f *Figure) int {
		if f.Tune == nil {
			return 0
		}
		return f.Tune.Rank
	})
}

// Briefs returns the figures the terminal's default strategy table shows,
// in rank order.
func Briefs() []Figure {
	return sorted(func(f *Figure) int {
		if f.Brief == nil {
			return 0
		}
		return f.Brief.Rank
	})
}

// Columns returns the strategy figures the wide strategy table shows, in
// column order.
func Columns() []Figure {
	return sorted(func(f *Figure) int { return f.Col })
}

// sorted lists the figures with a positive key, by key (stable).
func sorted(key func(*Figure) int) []Figure {
	var out []Figure
	for i := range registry {
		if key(&registry[i]) > 0 {
			out = append(out, registry[i])
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && key(&out[j]) < key(&out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

package report

import (
	"encoding/json"
	"html"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/figures"
)

// TestEveryFigureInEveryOutput: a figure registered in internal/figures
// reaches every output it is marked for without another edit: summary.json
// (and back through ReadSummary), the gate's figures and tolerances, the
// wide terminal, Markdown and HTML strategy tables, and tune's Pareto
// objectives. docs/metrics.md is checked by internal/docscheck.
func TestEveryFigureInEveryOutput(t *testing.T) {
	s := NewSummary(Meta{Tool: "compactbench", Inputs: []string{"x"}})
	s.Add(&analysis.Result{Runs: []analysis.RunRow{{Strategy: "window", RuleSet: "tuned", Compactions: 1}},
		Events: []analysis.EventRow{{Strategy: "window", CompressionRatio: 0.5}}})
	s.Finish()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Strategies map[string]map[string]json.RawMessage `json:"strategies"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(data, "summary.json")
	if err != nil {
		t.Fatal(err)
	}
	var wide, md, page strings.Builder
	if err := StrategyTable(&wide, s, true); err != nil {
		t.Fatal(err)
	}
	d := NewReportData("", nil)
	if err := WriteMarkdown(&md, s, d); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, s, d); err != nil {
		t.Fatal(err)
	}
	gated := map[string]bool{}
	for _, g := range GateFigures {
		gated[g.Name] = true
	}
	for _, f := range figures.All() {
		visible := f.Scope == figures.Strategy && !f.Hidden
		if _, ok := raw.Strategies["window"][f.Name]; ok != visible {
			t.Errorf("%s: in summary.json %v, want %v", f.Name, ok, visible)
		}
		if visible && f.Unit != figures.Label && !reflect.DeepEqual(back.Strategies["window"].Value(f.Name), s.Strategies["window"].Value(f.Name)) {
			t.Errorf("%s: read back %v", f.Name, back.Strategies["window"].Value(f.Name))
		}
		if gated[f.Name] != (f.Gate != nil) {
			t.Errorf("%s: gated %v, registry says %v", f.Name, gated[f.Name], f.Gate != nil)
		}
		if f.Gate != nil {
			if err := DefaultTolerances().Set(f.Name, "0.5"); err != nil {
				t.Errorf("%s: tolerance: %v", f.Name, err)
			}
		}
		if f.Column != "" {
			for out, text := range map[string]string{"terminal --wide": wide.String(), "report.md": md.String(), "report.html": html.UnescapeString(page.String())} {
				if !strings.Contains(text, f.Column) {
					t.Errorf("%s: column %q not in %s", f.Name, f.Column, out)
				}
			}
		}
		if f.Tune != nil && !slices.Contains(Columns[TuneRow](), f.Tune.Column) {
			t.Errorf("%s: tune has no column %q", f.Name, f.Tune.Column)
		}
	}
	if len(figures.ParetoObjectives()) == 0 {
		t.Error("tune's Pareto fronts have no objectives")
	}
}

package report

import (
	"encoding/json"
	"html"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
)

// figureSummary is a finished summary where every strategy replayed one
// session with one compaction event, so most figures are defined and not 0.
func figureSummary() *Summary {
	s := NewSummary(Meta{Tool: "compactbench", Inputs: []string{"x"}})
	for _, spec := range compaction.Specs() {
		half := 0.5
		s.Add(&analysis.Result{Runs: []analysis.RunRow{{Strategy: spec.ID, RuleSet: "tuned", Compactions: 1, CostUSD: 1, BaselineCostUSD: 2, CostRatio: &half}},
			Events: []analysis.EventRow{{Strategy: spec.ID, CompressionRatio: 0.5, NeedFacts: 2, NeedKept: 1, OrphanResults: 1, AnchorKind: "synthetic"}}})
	}
	s.Finish()
	return s
}

// headerCells are the cells of a rendered terminal table's header line
// (the first line that starts with a border and holds "strategy" or
// "setting").
func headerCells(t *testing.T, table string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "│") || !strings.Contains(line, "strategy") && !strings.Contains(line, "setting") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "│"), "│") {
			cells = append(cells, strings.TrimSpace(c))
		}
		return cells
	}
	t.Fatalf("no header line in\n%s", table)
	return nil
}

// oneLine joins wrapped text so a caption split over lines is found.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestEveryFigureInEveryOutput: a figure registered in internal/figures
// reaches every output it is marked for without another edit: summary.json
// (and back through ReadSummary), the gate's figures and tolerances, the
// terminal's default table (the figures with a Brief, by rank, within 100
// columns) and wide table, the Markdown and HTML strategy tables, each
// table's legend with the figure's caption, and tune's table (CSV and
// Parquet columns, terminal headers, values) and Pareto objectives.
// docs/metrics.md is checked by internal/docscheck.
func TestEveryFigureInEveryOutput(t *testing.T) {
	s := figureSummary()
	checkSummaryJSON(t, s)
	for _, f := range figures.All() {
		checkGate(t, &f)
	}
	t.Run("default table", func(t *testing.T) { checkNarrow(t, s) })
	t.Run("wide tables", func(t *testing.T) { checkWide(t, s) })
	t.Run("tune", func(t *testing.T) { checkTune(t, s) })
}

// checkSummaryJSON: a visible strategy figure is a key of summary.json and
// reads back to its value; hidden and other scopes' figures are not keys.
func checkSummaryJSON(t *testing.T, s *Summary) {
	t.Helper()
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
	for _, f := range figures.All() {
		visible := f.Scope == figures.Strategy && !f.Hidden
		if _, ok := raw.Strategies["window"][f.Name]; ok != visible {
			t.Errorf("%s: in summary.json %v, want %v", f.Name, ok, visible)
		}
		if visible && f.Unit != figures.Label && !reflect.DeepEqual(back.Strategies["window"].Value(f.Name), s.Strategies["window"].Value(f.Name)) {
			t.Errorf("%s: read back %v", f.Name, back.Strategies["window"].Value(f.Name))
		}
	}
}

// checkGate: the gate compares exactly the figures with a Gate, and each
// takes a tolerance.
func checkGate(t *testing.T, f *figures.Figure) {
	t.Helper()
	gated := false
	for _, g := range GateFigures {
		gated = gated || g.Name == f.Name
	}
	if gated != (f.Gate != nil) {
		t.Errorf("%s: gated %v, registry says %v", f.Name, gated, f.Gate != nil)
	}
	if f.Gate != nil {
		if err := DefaultTolerances().Set(f.Name, "0.5"); err != nil {
			t.Errorf("%s: tolerance: %v", f.Name, err)
		}
	}
}

// checkNarrow: the default table's columns are the figures with a Brief,
// in rank order and no other, within 100 columns, and its legend gives
// each one's caption.
func checkNarrow(t *testing.T, s *Summary) {
	var b strings.Builder
	if err := StrategyTable(&b, s, false); err != nil {
		t.Fatal(err)
	}
	want := []string{"strategy"}
	for _, f := range figures.Briefs() {
		want = append(want, f.Brief.Header)
		if !strings.Contains(oneLine(b.String()), f.Brief.Header+": "+f.Caption) {
			t.Errorf("%s: caption not in the default table's legend", f.Name)
		}
	}
	if got := headerCells(t, b.String()); !slices.Equal(got, want) {
		t.Errorf("default table columns %q, want the registry's briefs %q", got, want)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if utf8.RuneCountInString(line) > 100 {
			t.Errorf("default table wider than 100 columns: %q", line)
		}
	}
}

// checkWide: terminal --wide, report.md and report.html show one column
// per figure with a Column, in its order, and the legend gives each one's
// caption.
func checkWide(t *testing.T, s *Summary) {
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
	want := []string{"strategy"}
	for _, f := range figures.Columns() {
		want = append(want, f.Column)
	}
	if got := headerCells(t, wide.String()); !slices.Equal(got, want) {
		t.Errorf("wide table columns %q, want %q", got, want)
	}
	mdHeader := "| " + strings.Join(want, " | ") + " |"
	htmlHeader := "<th>" + strings.Join(want, "</th><th>") + "</th>"
	for out, text := range map[string]string{"terminal --wide": wide.String(), "report.md": md.String(), "report.html": html.UnescapeString(page.String())} {
		if out != "terminal --wide" && !strings.Contains(text, mdHeader) && !strings.Contains(text, htmlHeader) {
			t.Errorf("%s lacks the strategy table's header %q", out, want)
		}
		text = oneLine(text)
		for _, f := range figures.Columns() {
			if !strings.Contains(text, f.Column+": "+f.Caption) {
				t.Errorf("%s: column %q with its caption not in %s", f.Name, f.Column, out)
			}
		}
	}
}

// checkTune: every tune column is a column of tune.csv and tune.parquet;
// the generated ones come in rank order with the strategy's values and
// their headers in the terminal table; the Pareto objectives have columns.
func checkTune(t *testing.T, s *Summary) {
	cols := Columns[TuneRow]()
	rows := TuneRows(1, func(string, string) string { return "" }, s, map[string]string{})
	var b strings.Builder
	if err := TuneTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	header := headerCells(t, b.String())
	var gen, heads []string
	for _, f := range figures.All() {
		if f.Tune == nil {
			continue
		}
		if !slices.Contains(cols, f.Tune.Column) {
			t.Errorf("%s: tune has no column %q", f.Name, f.Tune.Column)
		}
	}
	for _, f := range figures.TuneColumns() {
		gen, heads = append(gen, f.Tune.Column), append(heads, f.Tune.Header)
		want := s.Strategies[rows[0].Strategy].Value(f.Name)
		if got := rows[0].Value(f.Tune.Column); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tune value %v, want %v", f.Name, deref(got), deref(want))
		}
	}
	if i := slices.Index(cols, gen[0]); i < 0 || !slices.Equal(cols[i:i+len(gen)], gen) {
		t.Errorf("tune.csv columns %q lack the registry's %q in order", cols, gen)
	}
	if i := slices.Index(header, heads[0]); i < 0 || !slices.Equal(header[i:i+len(heads)], heads) {
		t.Errorf("tune table headers %q lack the registry's %q in order", header, heads)
	}
	if len(figures.ParetoObjectives()) == 0 {
		t.Error("tune's Pareto fronts have no objectives")
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

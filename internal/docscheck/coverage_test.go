package docscheck

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/compaction"
	"github.com/compactbench/compactbench/internal/figures"
	"github.com/compactbench/compactbench/internal/report"
	"github.com/compactbench/compactbench/internal/tokens"
	"github.com/compactbench/compactbench/internal/transcript"
)

func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// documented reports whether doc names key in code style: `key`, or the
// per-ruler form `est_<ruler>` for est_chars4 and the like.
func documented(doc, key string) bool {
	for _, r := range tokens.Names() {
		for _, p := range []string{"est_", "err_"} {
			if key == p+r {
				key = p + "<ruler>"
			}
		}
	}
	return strings.Contains(doc, "`"+key+"`")
}

// jsonKeys lists the JSON keys of a struct type's exported fields.
func jsonKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// TestEveryColumnIsDefined fails when a table column or a summary.json
// figure has no definition in docs/metrics.md: add one line there saying
// what the new column means and how it is computed.
func TestEveryColumnIsDefined(t *testing.T) {
	doc := readDoc(t, "metrics.md")
	tables := []struct {
		name string
		cols []string
	}{
		{"transcripts", report.Columns[analysis.TranscriptRow]()},
		{"problems", report.Columns[analysis.ProblemRow]()},
		{"calls", report.Columns[analysis.CallRow]()},
		{"compact_boundaries", report.Columns[analysis.BoundaryRow]()},
		{"runs", report.Columns[analysis.RunRow]()},
		{"events", report.Columns[analysis.EventRow]()},
		{"anchors", report.Columns[analysis.AnchorRow]()},
		{"labels", report.Columns[analysis.LabelRow]()},
		{"rules", report.Columns[analysis.RuleRow]()},
		{"rereads", report.Columns[analysis.RereadRow]()},
		{"summaries", report.Columns[analysis.SummaryRow]()},
		{"tune", report.Columns[report.TuneRow]()},
		{"summary.json strategies", strategyKeys()},
		{"summary.json anchors", jsonKeys(reflect.TypeFor[report.RuleSetSummary]())},
		{"summary.json label scores", jsonKeys(reflect.TypeFor[report.LabelScores]())},
	}
	for _, tb := range tables {
		if len(tb.cols) == 0 {
			t.Fatalf("%s: no columns found", tb.name)
		}
		for _, c := range tb.cols {
			if !documented(doc, c) {
				t.Errorf("%s column %q is not defined in docs/metrics.md", tb.name, c)
			}
		}
	}
	for _, f := range figures.All() {
		if !f.Hidden && !documented(doc, f.Name) {
			t.Errorf("figure %q (%s) is not defined in docs/metrics.md", f.Name, f.Scope)
		}
	}
}

// strategyKeys are the keys of a strategy in summary.json: the registry's
// visible strategy figures.
func strategyKeys() []string {
	var out []string
	for _, f := range figures.All() {
		if f.Scope == figures.Strategy && !f.Hidden {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestEveryStrategyParameterIsDocumented fails when a strategy, or one of
// its parameters, is missing from docs/strategies.md: every constant says
// there where it comes from.
func TestEveryStrategyParameterIsDocumented(t *testing.T) {
	doc := readDoc(t, "strategies.md")
	for _, spec := range compaction.Specs() {
		if !strings.Contains(doc, "## `"+spec.ID+"`") && !strings.Contains(doc, "`"+spec.ID+"` (") {
			t.Errorf("strategy %s has no section in docs/strategies.md", spec.ID)
		}
		p := reflect.TypeOf(spec.Params())
		if p.Kind() == reflect.Pointer {
			p = p.Elem()
		}
		for i := 0; i < p.NumField(); i++ {
			name, _, _ := strings.Cut(p.Field(i).Tag.Get("yaml"), ",")
			if name != "" && name != "-" && !strings.Contains(doc, "| `"+name+"` |") {
				t.Errorf("strategy %s: parameter %s is not in a table of docs/strategies.md", spec.ID, name)
			}
		}
	}
}

// TestEveryToolKindIsDocumented: the tool kinds table of docs/formats.md has
// a row per harness table, and each row lists every name of that table in
// the column of its kind.
func TestEveryToolKindIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "formats.md"))
	if err != nil {
		t.Fatal(err)
	}
	header := -1
	rows := map[string][]string{}
	var cols []string
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") {
			header = -1
			continue
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "format" && len(cells) > 2 && cells[1] == "read" {
			header, cols = 0, cells
			continue
		}
		if header >= 0 {
			rows[strings.Trim(cells[0], "`")] = cells
		}
	}
	if cols == nil {
		t.Fatal("docs/formats.md has no tool kinds table (a header | format | read | ...)")
	}
	for _, h := range transcript.Harnesses {
		row, ok := rows[h.Format]
		if !ok {
			t.Errorf("docs/formats.md: no tool kinds row for %s", h.Format)
			continue
		}
		for name, tool := range h.Tools {
			if tool.Commands != nil {
				if !strings.Contains(string(doc), "`"+name+"`") {
					t.Errorf("docs/formats.md: sub-command tool %s not described", name)
				}
				continue
			}
			kind := tool.Kind.String()
			found := false
			for i, c := range cols {
				if c == kind && i < len(row) {
					for _, n := range strings.Split(row[i], ",") {
						n = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n), "(whole)"))
						found = found || n == name
					}
				}
			}
			if kind == "other" {
				found = found || strings.Contains(string(doc), name)
			}
			if !found {
				t.Errorf("docs/formats.md: %s's %s (%s) not in its row's %s column", h.Format, name, kind, kind)
			}
		}
	}
}

package report

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSVGHelpers(t *testing.T) {
	if got := []string{n1(12), n1(12.34), n1(-0.04), n1(math.NaN())}; !slices.Equal(got, []string{"12", "12.3", "0", "0"}) {
		t.Errorf("n1: %v", got)
	}
	if got := []string{compact(950), compact(12000), compact(1_540_000), compact(60000)}; !slices.Equal(got, []string{"950", "12k", "1.5M", "60k"}) {
		t.Errorf("compact: %v", got)
	}
	tk, top := ticks(177_300, 6)
	if top != 200_000 || !slices.Equal(tk, []float64{0, 50_000, 100_000, 150_000, 200_000}) {
		t.Errorf("ticks %v top %v", tk, top)
	}
	if s := niceStep(0.23, 5); s != 0.05 {
		t.Errorf("niceStep %v", s)
	}
	var d svgDoc
	d.path([]float64{0, 1, 2, 3}, []float64{5, math.NaN(), 7, 8}, "")
	if got := string(d.b); !strings.Contains(got, `d="M0 5 M2 7L3 8"`) {
		t.Errorf("a NaN breaks the line: %s", got)
	}
}

func TestMarkdownTableEscapes(t *testing.T) {
	var b strings.Builder
	mdTable(&b, []string{"a", "median |err|"}, [][]string{{"x|y", "two\nlines"}}, "")
	want := "| a | median \\|err\\| |\n|---|---:|\n| x\\|y | two lines |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestReportsWithoutData: a run with nothing to chart still writes both
// reports, saying so, without a data mark.
func TestReportsWithoutData(t *testing.T) {
	s := NewSummary(Meta{Tool: "compactbench", Inputs: []string{"x"}})
	s.Finish()
	d := NewReportData("", []Setting{{Name: "mode", Value: "replay"}})
	var md, page strings.Builder
	if err := WriteMarkdown(&md, s, d); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, s, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Caveats") || strings.Contains(md.String(), "## Strategies") {
		t.Errorf("markdown:\n%s", md.String())
	}
	html := page.String()
	if strings.Contains(html, `class="mark"`) || strings.Count(html, `class="chart empty"`) != 5 {
		t.Errorf("empty charts: %d", strings.Count(html, `class="chart empty"`))
	}
}

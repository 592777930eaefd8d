package report

import (
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
)

// TestContextChartMarksDrops: the chosen transcript's unrecorded drops are
// drawn on the real-context line, with a legend entry.
func TestContextChartMarksDrops(t *testing.T) {
	d := NewReportData("", nil)
	r := result("a", "a.jsonl", 4)
	r.Series.Real = []int64{50_000, 90_000, 40_000, 45_000}
	r.Series.Drops = []int64{2}
	d.Add(r)
	var b strings.Builder
	contextChart(&b, d)
	out := b.String()
	if strings.Count(out, "unrecorded drop before call 2") != 1 || !strings.Contains(out, "1 unrecorded drop") {
		t.Errorf("no drop marker:\n%s", out)
	}
	d = NewReportData("", nil)
	d.Add(result("b", "b.jsonl", 4))
	b.Reset()
	contextChart(&b, d)
	if strings.Contains(b.String(), "unrecorded drop") {
		t.Error("a drop marker without drops")
	}
}

// result is a result with a context series of calls calls.
func result(id, path string, calls int) *analysis.Result {
	return &analysis.Result{Series: &analysis.ContextSeries{TranscriptID: id, Path: path, Real: make([]int64, calls)}}
}

// TestContextChartShortReplay: a strategy whose replay stopped early (its
// prompts shorter than the calls) is drawn the same whatever line was
// drawn before it; the heights' scratch once kept the previous line's.
func TestContextChartShortReplay(t *testing.T) {
	draw := func(first []int64) string {
		d := NewReportData("", nil)
		r := result("a", "a.jsonl", 4)
		r.Series.Real = []int64{10_000, 20_000, 30_000, 40_000}
		r.Series.Strategies = []analysis.StrategySeries{
			{Strategy: "first", Window: 200_000, Prompt: first},
			{Strategy: "short", Window: 200_000, Prompt: []int64{10_000, 20_000}},
		}
		d.Add(r)
		var b strings.Builder
		contextChart(&b, d)
		out := b.String()
		i := strings.Index(out, `data-s="short"`)
		if i < 0 {
			t.Fatalf("no line of the short replay:\n%s", out)
		}
		return out[i : i+strings.Index(out[i:], "</g>")]
	}
	// Both first lines have the same largest value: the same scale.
	a := draw([]int64{90_000, 90_000, 90_000, 90_000})
	b := draw([]int64{90_000, 10_000, 50_000, 70_000})
	if a != b {
		t.Errorf("the short replay's line depends on the line before it:\n%s\n%s", a, b)
	}
}

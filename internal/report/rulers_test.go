package report

import (
	"strings"
	"testing"
)

func TestFamily(t *testing.T) {
	for in, want := range map[string]string{
		"claude-opus-4-5-20251101": "claude-opus-4-5",
		"claude-opus-4-20250514":   "claude-opus-4",
		"claude-opus-5":            "claude-opus-5",
		"gpt-4o-2024-08-06":        "gpt-4o-2024-08-06",
		"gpt-5.4":                  "gpt-5.4",
		"model-abcdefgh":           "model-abcdefgh",
		"":                         "(none)",
	} {
		if got := family(in); got != want {
			t.Errorf("family(%q) = %q, want %q", in, got, want)
		}
	}
}

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

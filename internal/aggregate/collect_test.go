package aggregate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
)

func TestHistogram(t *testing.T) {
	h := NewHistogram(0, 1, 4) // bins [0,.25) [.25,.5) [.5,.75) [.75,1]
	for _, v := range []float64{-0.2, 0, 0.1, 0.3, 0.5, 0.74, 0.8, 1, 1.5, math.NaN()} {
		h.Add(v)
	}
	if !slices.Equal(h.Counts, []int64{2, 1, 2, 2}) || h.Under != 1 || h.Over != 1 || h.Total() != 9 {
		t.Errorf("counts %v under %d over %d total %d", h.Counts, h.Under, h.Over, h.Total())
	}
	e := NewHistogram(-0.5, 0.5, 50)
	e.Add(-0.01) // bin 24: [-0.02, 0)
	e.Add(0.03)  // bin 26: [0.02, 0.04)
	if e.Counts[24] != 1 || e.Counts[26] != 1 || math.Abs(e.Width()-0.02) > 1e-12 {
		t.Errorf("error bins %v", e.Counts)
	}
}

func TestProblemClass(t *testing.T) {
	for in, want := range map[string]string{
		"tool_use toolu_01YRwx gets no tool_result on the active path": "tool_use … gets no tool_result on the active path",
		"malformed JSON: missing closing '\"'":                         "malformed JSON: missing closing '\"'",
		"label labels.jsonl:3: turn 5 but the transcript has 2 turns":  "label … turn … but the transcript has … turns",
		"invalid UTF-8 in a string":                                    "invalid UTF-8 in a string",
	} {
		if got := problemClass(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func result(id, path string, calls int, problems ...string) *analysis.Result {
	r := &analysis.Result{Series: &analysis.ContextSeries{TranscriptID: id, Path: path, Real: make([]int64, calls)}}
	for i, p := range problems {
		r.Problems = append(r.Problems, analysis.ProblemRow{Path: path, TranscriptID: id, Line: int64(i + 1), Reason: p})
	}
	return r
}

// TestChosenSeries: the series kept is the one asked for, else the one with
// the most calls, the first seen on a tie; only one is held.
func TestChosenSeries(t *testing.T) {
	feed := func(want string) *ReportData {
		d := NewReportData(want, nil)
		for _, r := range []*analysis.Result{result("a", "x/a.jsonl", 3), result("b", "x/b.jsonl", 7),
			result("c", "x/c.jsonl", 7), {}, result("d", "x/d.jsonl", 2)} {
			d.Add(r)
		}
		return d
	}
	if d := feed(""); d.Series.TranscriptID != "b" {
		t.Errorf("most calls: got %s, want b (first of the tie)", d.Series.TranscriptID)
	}
	if d := feed("d"); d.Series.TranscriptID != "d" || !d.WantFound {
		t.Errorf("by id: got %s", d.Series.TranscriptID)
	}
	if d := feed("x/a.jsonl"); d.Series.TranscriptID != "a" || !d.WantFound {
		t.Errorf("by path: got %s", d.Series.TranscriptID)
	}
	if d := feed("nope"); d.Series.TranscriptID != "b" || d.WantFound {
		t.Errorf("unknown: got %s found %v", d.Series.TranscriptID, d.WantFound)
	}
}

// TestLargestMainSession: the default series is the main session with the
// largest recorded peak, whatever subagents have; the selector keeps at most
// maxSessions series, largest first.
func TestLargestMainSession(t *testing.T) {
	d := NewReportData("", nil)
	series := func(id, kind string, peak int64, calls int) *analysis.Result {
		r := result(id, id+".jsonl", calls)
		r.Series.Kind, r.Series.PeakReal = kind, peak
		return r
	}
	d.Add(series("sub", "subagent", 900_000, 500))
	d.Add(series("small", "session", 1_000, 400))
	d.Add(series("big", "session", 150_000, 20))
	for i := range 20 {
		d.Add(series(fmt.Sprintf("s%02d", i), "session", int64(100+i), 10))
	}
	if d.Series.TranscriptID != "big" {
		t.Errorf("default %s, want big", d.Series.TranscriptID)
	}
	var got []string
	for _, s := range d.Sessions {
		got = append(got, s.TranscriptID)
	}
	if len(got) != maxSessions || got[0] != "big" || got[1] != "small" || got[2] != "s19" {
		t.Errorf("sessions %v", got)
	}
}

func TestTopProblems(t *testing.T) {
	d := NewReportData("", nil)
	d.Add(result("a", "a.jsonl", 1, "bad line 3", "bad line 9", "cycle at uuid-10", "bad line 12"))
	d.Add(result("b", "b.jsonl", 1, "cycle at uuid-71", "zzz"))
	top := d.TopProblems(2)
	if len(top) != 2 || top[0].Reason != "bad line …" || top[0].Count != 3 || top[1].Reason != "cycle at …" || top[1].Count != 2 {
		t.Fatalf("top %+v", top)
	}
	if top[0].Example.Path != "a.jsonl" || top[0].Example.Line != 1 || top[1].Example.Line != 3 {
		t.Errorf("examples: %+v %+v", top[0].Example, top[1].Example)
	}
	// Classes are bounded; the rest are counted together.
	var many []string
	for i := 0; i < maxProblemClasses+5; i++ {
		many = append(many, fmt.Sprintf("reason %s", strings.Repeat("x", i+1)))
	}
	d = NewReportData("", nil)
	d.Add(result("c", "c.jsonl", 1, many...))
	if len(d.Problems) != maxProblemClasses || d.OtherProblems != 5 {
		t.Errorf("%d classes, %d other", len(d.Problems), d.OtherProblems)
	}
}

func TestChartHistograms(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &analysis.Result{
		Runs: []analysis.RunRow{{Strategy: "mask"}, {Strategy: "codex"}},
		Events: []analysis.EventRow{{Strategy: "mask", CompressionRatio: 0.02}, {Strategy: "mask", CompressionRatio: -0.1},
			{Strategy: "codex", CompressionRatio: 0.99}},
		Calls: []analysis.CallRow{{ErrChars4: f(-0.21), ErrCalibrated: f(0.011)}, {ErrChars4: f(0.7)}, {Anchor: true}},
	}
	s := NewSummary(Meta{})
	s.Add(r)
	mask, codex := CompressionHistogram(s.Strategies["mask"]), CompressionHistogram(s.Strategies["codex"])
	if mask.Counts[0] != 1 || mask.Under != 1 || mask.Total() != 2 || codex.Counts[19] != 1 || codex.Total() != 1 {
		t.Errorf("compression %+v %+v", mask, codex)
	}
	c4, cal := s.Rulers.ErrorHistogram("chars4"), s.Rulers.ErrorHistogram("calibrated")
	if c4.Total() != 2 || c4.Over != 1 || c4.Counts[14] != 1 || cal.Total() != 1 || cal.Counts[25] != 1 {
		t.Errorf("chars4 %+v calibrated %+v", c4, cal)
	}
}

package aggregate

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/compactbench/compactbench/internal/analysis"
)

// Setting is one line of a report's run metadata ("mode", "replay").
type Setting struct {
	Name, Value string
}

// Histogram counts values in equal bins over [Lo, Hi); values below Lo go to
// Under, values at or above Hi to Over, except that a value equal to Hi is
// counted in the last bin (a compression ratio of exactly 1). Memory is the
// bins, whatever the number of values.
type Histogram struct {
	Lo, Hi      float64
	Counts      []int64
	Under, Over int64
}

// NewHistogram returns an empty histogram of n bins over [lo, hi).
func NewHistogram(lo, hi float64, n int) *Histogram {
	return &Histogram{Lo: lo, Hi: hi, Counts: make([]int64, n)}
}

// Add counts a value (NaN is ignored).
func (h *Histogram) Add(v float64) {
	switch {
	case math.IsNaN(v):
	case v < h.Lo:
		h.Under++
	case v > h.Hi:
		h.Over++
	case v == h.Hi:
		h.Counts[len(h.Counts)-1]++
	default:
		i := int((v - h.Lo) / (h.Hi - h.Lo) * float64(len(h.Counts)))
		h.Counts[min(i, len(h.Counts)-1)]++
	}
}

// Total is the number of values counted.
func (h *Histogram) Total() int64 {
	n := h.Under + h.Over
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Width is the width of one bin.
func (h *Histogram) Width() float64 { return (h.Hi - h.Lo) / float64(len(h.Counts)) }

// ProblemClass is a kind of input problem: its reason with the specifics
// (numbers, ids, file:line) blanked, how often it occurred and where first.
type ProblemClass struct {
	Reason  string
	Count   int64
	Example analysis.ProblemRow
}

// maxProblemClasses bounds the problem classes a report keeps; the rest are
// counted together.
const maxProblemClasses = 256

// problemClass blanks the specifics of a reason: words that look like
// numbers, ids or locations (two digits or more, or a digit with no letter,
// or a digit beside ':' or '/'), so "tool_use toolu_01X gets no
// tool_result" and "line 12" class together while "UTF-8" stays.
func problemClass(reason string) string {
	words := strings.Fields(reason)
	for i, w := range words {
		digits, letters := 0, 0
		for _, r := range w {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case unicode.IsLetter(r):
				letters++
			}
		}
		if digits >= 2 || (digits == 1 && (letters == 0 || strings.ContainsAny(w, ":/"))) {
			words[i] = "…"
		}
	}
	return strings.Join(words, " ")
}

// ReportData is what report.md and report.html need beyond the summary,
// gathered as results stream in and bounded whatever the corpus size: the
// per-call context series of one transcript, and problem classes. (The
// charts bin the compression ratios and ruler errors the summary keeps for
// its medians.)
type ReportData struct {
	// Settings describe the run (mode, window, rulers...), in order.
	Settings []Setting
	// Series is the chosen transcript's context series: the one named by
	// Want (transcript id or path), else the largest main session (largerSeries).
	Series *analysis.ContextSeries
	// Sessions are the largest replayed transcripts (at most maxSessions,
	// largest first), which report.html offers in a selector.
	Sessions []*analysis.ContextSeries
	// Want is the transcript asked for; WantFound says whether it was seen.
	Want      string
	WantFound bool
	// Problems are the problem classes, by reason; OtherProblems counts
	// problems past maxProblemClasses classes.
	Problems      map[string]*ProblemClass
	OtherProblems int64
}

// NewReportData returns an empty collector; want names the transcript whose
// context series to keep ("" for the one with the most calls).
func NewReportData(want string, settings []Setting) *ReportData {
	return &ReportData{Settings: settings, Want: want, Problems: map[string]*ProblemClass{}}
}

// Add takes what the reports need from one result.
func (d *ReportData) Add(r *analysis.Result) {
	for _, p := range r.Problems {
		cls := problemClass(p.Reason)
		pc := d.Problems[cls]
		if pc == nil {
			if len(d.Problems) >= maxProblemClasses {
				d.OtherProblems++
				continue
			}
			pc = &ProblemClass{Reason: cls, Example: p}
			d.Problems[cls] = pc
		}
		pc.Count++
	}
	d.choose(r.Series)
}

// maxSessions bounds the series report.html keeps for its selector.
const maxSessions = 12

func (d *ReportData) choose(s *analysis.ContextSeries) {
	if s == nil {
		return
	}
	if !d.WantFound && d.Want != "" && (s.TranscriptID == d.Want || s.Path == d.Want) {
		d.Series, d.WantFound = s, true
	}
	i := sort.Search(len(d.Sessions), func(i int) bool { return largerSeries(s, d.Sessions[i]) })
	if i < maxSessions {
		d.Sessions = append(d.Sessions, nil)
		copy(d.Sessions[i+1:], d.Sessions[i:])
		d.Sessions[i] = s
		if len(d.Sessions) > maxSessions {
			d.Sessions = d.Sessions[:maxSessions]
		}
	}
	if !d.WantFound {
		d.Series = d.Sessions[0]
	}
}

// largerSeries orders the series the report offers: main sessions before
// subagents, then the larger recorded peak context, then more calls; the
// first seen stays first on a tie.
func largerSeries(a, b *analysis.ContextSeries) bool {
	am, bm := a.Kind == "session", b.Kind == "session"
	switch {
	case am != bm:
		return am
	case a.PeakReal != b.PeakReal:
		return a.PeakReal > b.PeakReal
	}
	return a.Calls() > b.Calls()
}

// TopProblems returns the n most frequent problem classes (ties by reason).
func (d *ReportData) TopProblems(n int) []*ProblemClass {
	out := make([]*ProblemClass, 0, len(d.Problems))
	for _, p := range d.Problems {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Reason < out[j].Reason
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

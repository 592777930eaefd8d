package report

import (
	"io"
	"math"
	"strconv"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/tokens"
)

// RulerErrors are one ruler's error statistics in summary.json.
type RulerErrors struct {
	// Calls: every non-anchor call with a real context. Complete: those no
	// load problem precedes (their real context holds nothing the transcript
	// lost). PreTokens: recorded compactions, against the harness's own
	// count.
	Calls     tokens.ErrStats `json:"calls"`
	Complete  tokens.ErrStats `json:"complete_calls"`
	PreTokens tokens.ErrStats `json:"pre_tokens"`
}

// Rulers is the rulers section of summary.json: per ruler, median and p95 of
// |err| = |est − real| / real and how many calls they cover.
type Rulers struct {
	Overhead string                  `json:"overhead"`
	Measured map[string]*RulerErrors `json:"errors"`

	calls, complete, pre map[string][]float64
}

func newRulers(overhead string) *Rulers {
	return &Rulers{Overhead: overhead, Measured: map[string]*RulerErrors{},
		calls: map[string][]float64{}, complete: map[string][]float64{}, pre: map[string][]float64{}}
}

func (s *Rulers) add(r *analysis.Result) {
	for i := range r.Calls {
		c := &r.Calls[i]
		for _, name := range tokens.Names() {
			_, e := c.Slots(name)
			if *e == nil {
				continue
			}
			s.calls[name] = append(s.calls[name], **e)
			if c.Complete {
				s.complete[name] = append(s.complete[name], **e)
			}
		}
	}
	for i := range r.Boundaries {
		b := &r.Boundaries[i]
		for _, name := range tokens.Names() {
			if _, e := b.Slots(name); *e != nil {
				s.pre[name] = append(s.pre[name], **e)
			}
		}
	}
}

func (s *Rulers) finish() {
	for _, name := range tokens.Names() {
		if len(s.calls[name]) == 0 && len(s.pre[name]) == 0 {
			continue
		}
		s.Measured[name] = &RulerErrors{Calls: tokens.AbsErrStats(s.calls[name]),
			Complete: tokens.AbsErrStats(s.complete[name]), PreTokens: tokens.AbsErrStats(s.pre[name])}
	}
}

// errorHistogram bins a ruler's signed call errors (est − real) / real in
// 2 % bins over [−50 %, +50 %) for report.html; nil when there are none.
func (s *Rulers) errorHistogram(name string) *Histogram {
	if s == nil || len(s.calls[name]) == 0 {
		return nil
	}
	h := NewHistogram(-0.5, 0.5, 50)
	for _, e := range s.calls[name] {
		h.Add(e)
	}
	return h
}

// RulerTable renders the rulers' errors for the terminal.
func RulerTable(w io.Writer, s *Summary) error {
	header, rows := rulerGrid(s)
	if len(rows) == 0 {
		return nil
	}
	return RenderTable(w, header, rows)
}

// rulerGrid is the rulers table's header and rows (tokens.Names order).
func rulerGrid(s *Summary) ([]string, [][]string) {
	header := []string{"ruler", "calls", "median |err|", "p95 |err|", "complete", "median", "p95", "compactions", "preTokens |err|"}
	if s.Rulers == nil || len(s.Rulers.Measured) == 0 {
		return header, nil
	}
	pct := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
	}
	var rows [][]string
	for _, name := range tokens.Names() {
		e := s.Rulers.Measured[name]
		if e == nil {
			continue
		}
		rows = append(rows, []string{name, itoa(int64(e.Calls.N)), pct(e.Calls.Median), pct(e.Calls.P95),
			itoa(int64(e.Complete.N)), pct(e.Complete.Median), pct(e.Complete.P95),
			itoa(int64(e.PreTokens.N)), pct(e.PreTokens.Median)})
	}
	return header, rows
}

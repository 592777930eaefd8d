package report

import (
	"io"
	"math"
	"strconv"

	"github.com/compactbench/compactbench/internal/tokens"
)

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

// breakdownGrid is the ruler-error breakdown table: per tokenizer
// generation, model family and content class, the calibrated and chars4
// rulers' errors on complete calls; then the calibrated ruler refitted on
// this corpus, in sample and cross-validated, per generation.
func breakdownGrid(s *Summary) ([]string, [][]string) {
	header := []string{"group", "calls", "calibrated median", "calibrated p95", "chars4 median", "chars4 p95"}
	r := s.Rulers
	if r == nil {
		return header, nil
	}
	pct := func(e tokens.ErrStats, ok bool) (string, string) {
		if !ok || e.N == 0 {
			return "-", "-"
		}
		return strconv.FormatFloat(100*e.Median, 'f', 1, 64) + "%", strconv.FormatFloat(100*e.P95, 'f', 1, 64) + "%"
	}
	var rows [][]string
	for _, part := range []struct {
		label string
		m     map[string]map[string]tokens.ErrStats
	}{{"tokenizer", r.ByTokenizer}, {"family", r.ByFamily}, {"content", r.ByContent}} {
		for _, k := range sortedKeys(part.m) {
			cal, okc := part.m[k][tokens.Calibrated]
			c4, ok4 := part.m[k][tokens.Chars4]
			n := max(cal.N, c4.N)
			cm, cp := pct(cal, okc)
			hm, hp := pct(c4, ok4)
			rows = append(rows, []string{part.label + " " + k, itoa(int64(n)), cm, cp, hm, hp})
		}
	}
	if c := r.Calibration; c != nil {
		for _, k := range sortedKeys(c.InSample) {
			in, cv := c.InSample[k], c.CrossValidated[k]
			im, ip := pct(in, true)
			vm, vp := pct(cv, true)
			rows = append(rows, []string{"refit " + k + ": in sample / cross-validated", itoa(int64(in.N)), im + " / " + vm, ip + " / " + vp, "", ""})
		}
	}
	return header, rows
}

// breakdownLegend explains breakdownGrid.
const breakdownLegend = "Ruler error on complete calls per tokenizer generation, model family (model name without date) and " +
	"content class (the class that grew the prompt most since the call's anchor), to see where counts are weak on this " +
	"corpus. The refit rows fit the calibrated ruler on this corpus itself: in sample, and cross-validated by transcript " +
	"(10 folds; each transcript measured with factors fitted without it) — the figure to expect on unseen sessions like these."

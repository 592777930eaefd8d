package report

import (
	"hash/fnv"
	"io"
	"math"
	"strconv"
	"strings"

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
// |err| = |est − real| / real and how many calls they cover; the breakdowns
// of the complete calls' errors per tokenizer generation, model family and
// content class; and the calibrated ruler fitted on this corpus, measured in
// sample and cross-validated.
type Rulers struct {
	Overhead string                  `json:"overhead"`
	Measured map[string]*RulerErrors `json:"errors"`
	// ByTokenizer, ByFamily and ByContent map a group to each ruler's
	// errors on its complete non-anchor calls. A family is the model name
	// without its date suffix; a call's content class is the class that
	// grew its prompt most since its anchor (tokens.SampleClasses).
	ByTokenizer map[string]map[string]tokens.ErrStats `json:"by_tokenizer,omitempty"`
	ByFamily    map[string]map[string]tokens.ErrStats `json:"by_family,omitempty"`
	ByContent   map[string]map[string]tokens.ErrStats `json:"by_content,omitempty"`
	// Calibration is the calibrated ruler refitted on this corpus.
	Calibration *CalibrationFigures `json:"calibration,omitempty"`

	calls, complete, pre map[string][]float64
	groups               map[string]map[string]map[string][]float64 // kind → group → ruler → errors
	samples              []tokens.Sample
	sampleCalls          int
	models               *tokens.Models
}

// CalibrationFigures are the calibrated ruler's errors when fitted on the
// run's own corpus (per tokenizer generation, "all" for every call): in
// sample, and cross-validated by transcript (each transcript measured with
// factors fitted without its fold). The cross-validated figure is the one to
// expect on sessions like these that the fit never saw.
type CalibrationFigures struct {
	Folds int `json:"folds"`
	// Calls is how many calls the fit kept (at most 500,000, the first in
	// output order).
	Calls          int                        `json:"calls"`
	InSample       map[string]tokens.ErrStats `json:"in_sample"`
	CrossValidated map[string]tokens.ErrStats `json:"cross_validated"`
	// Notes name the generations that had no calls to fit on.
	Notes []string `json:"notes,omitempty"`
}

// cvFolds is the number of folds of the cross-validation by transcript.
const cvFolds = 10

// maxCVCalls bounds the calls kept for the cross-validation (the first in
// output order), so memory stays bounded on very large corpora.
const maxCVCalls = 500_000

func newRulers(overhead string, models *tokens.Models) *Rulers {
	return &Rulers{Overhead: overhead, Measured: map[string]*RulerErrors{},
		calls: map[string][]float64{}, complete: map[string][]float64{}, pre: map[string][]float64{},
		groups: map[string]map[string]map[string][]float64{}, models: models}
}

// family is a model name without its date suffix (claude-opus-4-5-20251101
// → claude-opus-4-5).
func family(model string) string {
	if i := strings.LastIndexByte(model, '-'); i > 0 && len(model)-i == 9 {
		if _, err := strconv.Atoi(model[i+1:]); err == nil {
			return model[:i]
		}
	}
	if model == "" {
		return "(none)"
	}
	return model
}

// group adds one error to a breakdown.
func (s *Rulers) group(kind, key, ruler string, e float64) {
	g := s.groups[kind]
	if g == nil {
		g = map[string]map[string][]float64{}
		s.groups[kind] = g
	}
	if g[key] == nil {
		g[key] = map[string][]float64{}
	}
	g[key][ruler] = append(g[key][ruler], e)
}

func (s *Rulers) add(r *analysis.Result) {
	j := 0 // index of the next measured call in r.Classes
	for i := range r.Calls {
		c := &r.Calls[i]
		class := ""
		if c.Complete && !c.Anchor && c.RealContext != nil && *c.RealContext > 0 {
			if j < len(r.Classes) {
				class = r.Classes[j]
			}
			j++
		}
		fam := family(c.Model)
		for _, name := range tokens.Names() {
			_, e := c.Slots(name)
			if *e == nil {
				continue
			}
			s.calls[name] = append(s.calls[name], **e)
			if c.Complete {
				s.complete[name] = append(s.complete[name], **e)
				s.group("tokenizer", c.Tokenizer, name, **e)
				s.group("family", fam, name, **e)
				if class != "" {
					s.group("content", class, name, **e)
				}
			}
		}
	}
	if r.Sample != nil && len(r.Sample.Calls) > 0 && s.sampleCalls+len(r.Sample.Calls) <= maxCVCalls {
		s.samples = append(s.samples, *r.Sample)
		s.sampleCalls += len(r.Sample.Calls)
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
	stats := func(kind string) map[string]map[string]tokens.ErrStats {
		g := s.groups[kind]
		if len(g) == 0 {
			return nil
		}
		out := map[string]map[string]tokens.ErrStats{}
		for key, byRuler := range g {
			out[key] = map[string]tokens.ErrStats{}
			for name, errs := range byRuler {
				out[key][name] = tokens.AbsErrStats(errs)
			}
		}
		return out
	}
	s.ByTokenizer, s.ByFamily, s.ByContent = stats("tokenizer"), stats("family"), stats("content")
	s.Calibration = s.crossValidate()
}

// crossValidate refits the calibrated ruler on the run's samples and
// measures it in sample and by cvFolds-fold cross-validation by transcript
// (a transcript's fold comes from its path, so the figure does not depend
// on -j); nil when there is nothing to fit.
func (s *Rulers) crossValidate() *CalibrationFigures {
	if len(s.samples) == 0 {
		return nil
	}
	mode, _ := tokens.ParseAnchoring(s.Overhead)
	folds := make([]int, len(s.samples))
	for i := range s.samples {
		h := fnv.New32a()
		h.Write([]byte(s.samples[i].Path))
		folds[i] = int(h.Sum32() % cvFolds)
	}
	cal, err := tokens.Calibrate(s.samples, mode, tokens.FitOptions{}, s.models, true, folds)
	if err != nil {
		return nil
	}
	in, cv := map[string][]float64{}, map[string][]float64{}
	for i := range s.samples {
		g := s.samples[i].Gen
		in["all"] = append(in["all"], cal.InSample[i]...)
		in[g] = append(in[g], cal.InSample[i]...)
		cv["all"] = append(cv["all"], cal.HeldOut[i]...)
		cv[g] = append(cv[g], cal.HeldOut[i]...)
	}
	out := &CalibrationFigures{Folds: cvFolds, Calls: s.sampleCalls, InSample: map[string]tokens.ErrStats{}, CrossValidated: map[string]tokens.ErrStats{}, Notes: cal.Notes}
	for k, v := range in {
		if len(v) > 0 {
			out.InSample[k] = tokens.AbsErrStats(v)
			out.CrossValidated[k] = tokens.AbsErrStats(cv[k])
		}
	}
	s.samples = nil
	return out
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

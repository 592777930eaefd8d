package aggregate

import (
	"hash/fnv"
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

// ErrorHistogram bins a ruler's signed call errors (est − real) / real in
// 2 % bins over [−50 %, +50 %) for report.html; nil when there are none.
func (s *Rulers) ErrorHistogram(name string) *Histogram {
	if s == nil || len(s.calls[name]) == 0 {
		return nil
	}
	h := NewHistogram(-0.5, 0.5, 50)
	for _, e := range s.calls[name] {
		h.Add(e)
	}
	return h
}

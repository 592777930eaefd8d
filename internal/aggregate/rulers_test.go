package aggregate

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/tokens"
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

// oracleRulers computes the rulers' figures the way they were computed
// before the errors were spilled: every error kept, sorted whole.
func oracleRulers(results []*analysis.Result) *Rulers {
	out := &Rulers{Measured: map[string]*RulerErrors{}}
	calls, complete, pre := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	groups := map[string]map[string]map[string][]float64{}
	group := func(kind, key, ruler string, e float64) {
		if groups[kind] == nil {
			groups[kind] = map[string]map[string][]float64{}
		}
		if groups[kind][key] == nil {
			groups[kind][key] = map[string][]float64{}
		}
		groups[kind][key][ruler] = append(groups[kind][key][ruler], e)
	}
	for _, r := range results {
		j := 0
		for i := range r.Calls {
			c := &r.Calls[i]
			class := ""
			if c.Complete && !c.Anchor && c.RealContext != nil && *c.RealContext > 0 {
				if j < len(r.Classes) {
					class = r.Classes[j]
				}
				j++
			}
			for ri, name := range tokens.Names() {
				_, e := c.Slots(tokens.RulerID(ri))
				if *e == nil {
					continue
				}
				calls[name] = append(calls[name], **e)
				if c.Complete {
					complete[name] = append(complete[name], **e)
					group("tokenizer", c.Tokenizer, name, **e)
					group("family", family(c.Model), name, **e)
					if class != "" {
						group("content", class, name, **e)
					}
				}
			}
		}
		for i := range r.Boundaries {
			for ri, name := range tokens.Names() {
				if _, e := r.Boundaries[i].Slots(tokens.RulerID(ri)); *e != nil {
					pre[name] = append(pre[name], **e)
				}
			}
		}
	}
	for _, name := range tokens.Names() {
		if len(calls[name]) == 0 && len(pre[name]) == 0 {
			continue
		}
		out.Measured[name] = &RulerErrors{Calls: tokens.AbsErrStats(calls[name]),
			Complete: tokens.AbsErrStats(complete[name]), PreTokens: tokens.AbsErrStats(pre[name])}
	}
	stats := func(kind string) map[string]map[string]tokens.ErrStats {
		if len(groups[kind]) == 0 {
			return nil
		}
		m := map[string]map[string]tokens.ErrStats{}
		for key, byRuler := range groups[kind] {
			m[key] = map[string]tokens.ErrStats{}
			for name, errs := range byRuler {
				m[key][name] = tokens.AbsErrStats(errs)
			}
		}
		return m
	}
	out.ByTokenizer, out.ByFamily, out.ByContent = stats("tokenizer"), stats("family"), stats("content")
	return out
}

// randomRulerResults are results with errors of every kind of value the
// selection must order: ties, zeros of both signs, tiny and huge values.
func randomRulerResults(seed uint64, n int) []*analysis.Result {
	rng := rand.New(rand.NewPCG(seed, 3))
	f := func() *float64 {
		var v float64
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			v = float64(rng.IntN(5)) / 100 // ties
		case 2:
			v = math.Copysign(0, -1)
		case 3:
			v = rng.NormFloat64() * 1e-9
		case 4:
			v = rng.NormFloat64() * 40
		default:
			v = rng.NormFloat64() * 0.1
		}
		return &v
	}
	models := []string{"claude-opus-4-5-20251101", "claude-sonnet-4-20250514", "gpt-5.4", ""}
	toks := []string{"claude-3", "o200k", ""}
	classes := []string{"prose", "tool_output", "thinking"}
	var out []*analysis.Result
	for t := 0; t < n; t++ {
		r := &analysis.Result{}
		real := int64(1000)
		for k := 0; k < rng.IntN(40); k++ {
			c := analysis.CallRow{Complete: rng.IntN(5) != 0, Anchor: rng.IntN(10) == 0, Model: models[rng.IntN(len(models))],
				Tokenizer: toks[rng.IntN(len(toks))], ErrChars4: f(), ErrChars4Msg: f(), ErrCalibrated: f()}
			if rng.IntN(3) == 0 {
				c.ErrO200k = f()
			}
			if rng.IntN(8) != 0 {
				c.RealContext = &real
			}
			if c.Complete && !c.Anchor && c.RealContext != nil && rng.IntN(6) != 0 {
				r.Classes = append(r.Classes, classes[rng.IntN(len(classes))])
			}
			r.Calls = append(r.Calls, c)
		}
		for k := 0; k < rng.IntN(3); k++ {
			r.Boundaries = append(r.Boundaries, analysis.BoundaryRow{ErrChars4: f(), ErrCalibrated: f()})
		}
		out = append(out, r)
	}
	return out
}

// logCase is a case of the tests of the rulers' logs: spillMem and the
// number of results.
type logCase struct {
	name string
	mem  int
	n    int
}

// TestRulersMatchOracle: the figures selected from the spilled errors are
// those of sorting every error, bit for bit, whether the log stays in
// memory or goes to its file (orderstat's tests hold the selection to
// sorting whatever the size of the buckets it gathers).
func TestRulersMatchOracle(t *testing.T) {
	defer func(m int) { spillMem = m }(spillMem)
	for _, tc := range []logCase{
		{"memory", 1 << 20, 300},
		{"file", 256, 300},
		{"file-small", 100, 400},
		{"empty", 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spillMem = tc.mem
			results := randomRulerResults(uint64(tc.n)+uint64(tc.mem), tc.n)
			s := newRulers("", nil)
			for _, r := range results {
				s.add(r)
			}
			if tc.mem < 1000 && tc.n > 0 && s.log.InFile() == 0 {
				t.Fatal("the log never went to its file")
			}
			s.finish()
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			want := oracleRulers(results)
			got := mustJSON(t, s)
			exp := mustJSON(t, want)
			if string(got) != string(exp) {
				t.Errorf("figures differ:\n got %s\nwant %s", got, exp)
			}
			if tc.n > 0 && len(s.Measured) == 0 {
				t.Error("no figures")
			}
		})
	}
}

// oracleCalibration is the calibration figures as crossValidate computed
// them before the samples were spilled: tokens.Calibrate over every
// sample held in memory, every error sorted.
func oracleCalibration(samples []tokens.Sample, models *tokens.Models) *CalibrationFigures {
	folds := make([]int, len(samples))
	calls := 0
	for i := range samples {
		h := fnv.New32a()
		h.Write([]byte(samples[i].Path))
		folds[i] = int(h.Sum32() % cvFolds)
		calls += len(samples[i].Calls)
	}
	cal, err := tokens.Calibrate(samples, tokens.AnchorSegments, tokens.FitOptions{}, models, true, folds)
	if err != nil {
		return nil
	}
	in, cv := map[string][]float64{}, map[string][]float64{}
	for i := range samples {
		g := samples[i].Gen
		in["all"] = append(in["all"], cal.InSample[i]...)
		in[g] = append(in[g], cal.InSample[i]...)
		cv["all"] = append(cv["all"], cal.HeldOut[i]...)
		cv[g] = append(cv[g], cal.HeldOut[i]...)
	}
	out := &CalibrationFigures{Folds: cvFolds, Calls: calls, InSample: map[string]tokens.ErrStats{}, CrossValidated: map[string]tokens.ErrStats{}, Notes: cal.Notes}
	for k, v := range in {
		if len(v) > 0 {
			out.InSample[k] = tokens.AbsErrStats(v)
			out.CrossValidated[k] = tokens.AbsErrStats(cv[k])
		}
	}
	return out
}

// randomSamples are calibration samples of several generations (one
// unset) whose real contexts follow factors with noise and outliers.
func randomSamples(seed uint64, n int) []tokens.Sample {
	rng := rand.New(rand.NewPCG(seed, 4))
	gens := []string{"claude-3", "claude-4.7", "", "o200k"}
	var out []tokens.Sample
	for f := 0; f < n; f++ {
		s := tokens.Sample{Path: "dir/session-" + strconv.Itoa(f) + ".jsonl", Gen: gens[rng.IntN(len(gens))]}
		var x [11]float64
		seg := 0
		for k := 0; k < 2+rng.IntN(30); k++ {
			anchor := k == 0 || rng.IntN(20) == 0
			if anchor {
				seg++
			}
			if k > 0 {
				x[0] += float64(rng.IntN(400))
				x[4] += float64(rng.IntN(300))
				x[5] += float64(rng.IntN(20000))
				x[6] += float64(1 + rng.IntN(3))
				c := float64(rng.IntN(4))
				x[7] += c
				x[8] += 2 * c
				x[9] += c
			}
			real := 20000 + 0.3*x[0] + 0.35*x[4] + 0.31*x[5] + 4*x[6] + 22*x[7] + 27*x[8]
			if rng.IntN(25) == 0 {
				real += 30000
			}
			s.Calls = append(s.Calls, tokens.SampleCall{X: x, Real: math.Round(real), Anchor: anchor, Complete: rng.IntN(15) != 0, Segment: seg})
		}
		out = append(out, s)
	}
	return out
}

// TestCrossValidateMatchesOracle: the calibration figures computed from
// the spilled samples are those of tokens.Calibrate over the samples in
// memory, bit for bit, with the logs in memory and in their files.
func TestCrossValidateMatchesOracle(t *testing.T) {
	defer func(m int) { spillMem = m }(spillMem)
	for _, tc := range []logCase{
		{"memory", 1 << 20, 120},
		{"file", 4096, 120},
		{"file-small", 512, 150},
		{"one", 512, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spillMem = tc.mem
			samples := randomSamples(uint64(tc.n), tc.n)
			s := newRulers("", nil)
			for i := range samples {
				s.add(&analysis.Result{Sample: &samples[i]})
			}
			if tc.mem < 1<<20 && tc.n > 1 && s.samples.InFile() == 0 {
				t.Fatal("the samples never went to their file")
			}
			s.finish()
			if err := s.Err(); err != nil {
				t.Fatal(err)
			}
			got := mustJSON(t, s.Calibration)
			want := mustJSON(t, oracleCalibration(samples, nil))
			if string(got) != string(want) {
				t.Errorf("calibration figures differ:\n got %s\nwant %s", got, want)
			}
			if tc.n > 1 && s.Calibration == nil {
				t.Error("no calibration figures")
			}
		})
	}
}

// TestRulersFinishTwice: a second finish keeps the figures of the first
// (the logs are released after it).
func TestRulersFinishTwice(t *testing.T) {
	s := newRulers("", nil)
	for _, r := range randomRulerResults(9, 50) {
		s.add(r)
	}
	s.finish()
	first := mustJSON(t, s)
	s.finish()
	second := mustJSON(t, s)
	if err := s.Err(); err != nil || string(first) != string(second) {
		t.Errorf("second finish: err %v, figures changed: %v", err, string(first) != string(second))
	}
}

// BenchmarkRulersFinish is the end of a run's rulers: the figures
// selected from the logs (spill) against sorting every error and
// calibrating over the samples in memory (sort, the former way).
func BenchmarkRulersFinish(b *testing.B) {
	results := randomRulerResults(5, 2000)
	samples := randomSamples(6, 1500)
	for i := range samples {
		results[i].Sample = &samples[i]
	}
	b.Run("spill", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			s := newRulers("", nil)
			for _, r := range results {
				s.add(r)
			}
			b.StartTimer()
			s.finish()
		}
	})
	b.Run("sort", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			oracleRulers(results)
			oracleCalibration(samples, nil)
		}
	})
}

// mustJSON is v as JSON, failing the test when it does not encode (two
// failed encodings would otherwise compare equal).
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	return b
}

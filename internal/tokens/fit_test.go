package tokens

import (
	"math"
	"math/rand/v2"
	"testing"
)

// synthetic builds samples whose real contexts follow known factors exactly:
// each call adds random amounts of every quantity.
func synthetic(truth *Factors, files, calls int, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 1))
	v := truth.vector()
	var out []Sample
	for f := 0; f < files; f++ {
		s := Sample{Path: "f"}
		var x features
		for k := 0; k < calls; k++ {
			if k > 0 {
				growFeatures(rng, &x)
			}
			real := 20000.0
			for j := range v {
				real += v[j] * x[j]
			}
			s.Calls = append(s.Calls, SampleCall{X: x, Real: math.Round(real), Anchor: k == 0, Complete: true, Segment: 1})
		}
		out = append(out, s)
	}
	return out
}

func TestFitRecoversKnownFactors(t *testing.T) {
	truth := &Factors{Prose: 0.3, Injected: 0.355, Thinking: 0.45, Signature: 0.2, ToolInput: 0.35, ToolOutput: 0.31,
		Message: 4, ToolCall: 22, ToolParam: 27, ToolResult: 0, Image: 1600}
	samples := synthetic(truth, 6, 80, 7)
	got, err := Fit(samples, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := truth.vector()
	have := got.vector()
	for _, j := range []int{fProse, fThinking, fToolInput, fToolOutput, fMessage, fToolCall, fToolParam} {
		// Real contexts are rounded to whole tokens: allow that noise.
		if math.Abs(have[j]-want[j]) > 0.01*want[j]+0.05 {
			t.Errorf("%s = %.4f, want %.4f", featureNames[j], have[j], want[j])
		}
	}
	// Quantities that never change keep the prior.
	prior := DefaultFactors()
	if got.Image != prior.Image || got.Signature != prior.Signature || got.Injected != prior.Injected {
		t.Errorf("unsupported factors moved: %+v", got)
	}
	if got.Fit.Steps != 6*79 {
		t.Errorf("steps = %d, want %d", got.Fit.Steps, 6*79)
	}
	// Errors of the true factors are ~0 (only rounding).
	for i := range samples {
		for _, e := range SampleErrors(&samples[i], got) {
			if math.Abs(e) > 0.002 {
				t.Fatalf("error %v on exact data", e)
			}
		}
	}
}

func TestFitResistsOutlierSteps(t *testing.T) {
	truth := &Factors{Prose: 0.3, Thinking: 0.45, ToolInput: 0.35, ToolOutput: 0.31, Message: 4, ToolCall: 22, ToolParam: 27, Image: 1600, Signature: 0.2, Injected: 0.3}
	samples := synthetic(truth, 6, 80, 11)
	// Unrecorded content: a few calls gain 30k tokens the features do not show.
	for f := range samples {
		cs := samples[f].Calls
		for k := 40; k < len(cs); k++ {
			if f%2 == 0 {
				cs[k].Real += 30000
			}
		}
	}
	got, err := Fit(samples, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.ToolOutput-0.31) > 0.01 || math.Abs(got.Prose-0.3) > 0.05 {
		t.Errorf("outlier steps dragged the factors: %+v", got)
	}
}

func TestFitNoData(t *testing.T) {
	if _, err := Fit(nil, FitOptions{}); err != ErrNoData {
		t.Errorf("err = %v, want ErrNoData", err)
	}
	one := []Sample{{Calls: []SampleCall{{Real: 100, Anchor: true, Complete: true, Segment: 1}}}}
	if _, err := Fit(one, FitOptions{}); err != ErrNoData {
		t.Errorf("single call: err = %v, want ErrNoData", err)
	}
}

func TestNNLS(t *testing.T) {
	// y = 2·x0 − 1·x1 exactly: the unconstrained solution has x1 < 0, so
	// NNLS sets x1 = 0 and fits x0 alone: x0 = Σx0·y / Σx0².
	X := [][]float64{{1, 0}, {0, 1}, {1, 1}, {2, 1}}
	y := []float64{2, -1, 1, 3}
	A := [][]float64{{0, 0}, {0, 0}}
	b := []float64{0, 0}
	for i := range X {
		for a := 0; a < 2; a++ {
			for c := 0; c < 2; c++ {
				A[a][c] += X[i][a] * X[i][c]
			}
			b[a] += X[i][a] * y[i]
		}
	}
	x := nnls(A, b)
	want0 := (2.0 + 1 + 6) / (1 + 1 + 4)
	if x[1] != 0 || math.Abs(x[0]-want0) > 1e-6 {
		t.Errorf("nnls = %v, want [%v 0]", x, want0)
	}
	// Unconstrained optimum inside the orthant is returned as is.
	x = nnls([][]float64{{2, 0}, {0, 4}}, []float64{2, 8})
	if math.Abs(x[0]-1) > 1e-6 || math.Abs(x[1]-2) > 1e-6 {
		t.Errorf("nnls = %v, want [1 2]", x)
	}
}

// TestCalibratePerGeneration: newer-tokenizer sessions whose usage is the
// older sessions' × 1.46 for the same kind of content. The fit per
// generation recovers the factor within 3 %, even from a table that claims
// both tokenizers count alike (the prior is wrong), and measures both
// generations in and out of sample.
func TestCalibratePerGeneration(t *testing.T) {
	truth := &Factors{Prose: 0.3, Injected: 0.355, Thinking: 0.45, Signature: 0.2, ToolInput: 0.35, ToolOutput: 0.31,
		Message: 4, ToolCall: 22, ToolParam: 27, ToolResult: 0, Image: 1600}
	const ratio = 1.46
	old := synthetic(truth, 6, 80, 7)
	newer := synthetic(truth.Scaled(ratio), 4, 60, 9)
	for i := range old {
		old[i].Gen = GenClaude3
	}
	for i := range newer {
		newer[i].Gen = GenClaude47
	}
	flat, err := ParseModels([]byte("tokenizers: {claude-3: 1, claude-4.7: 1, o200k: 0.9}\nmodels:\n  - {pattern: \"*\", tokenizer: claude-3, windows: [200000]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	samples := append(old, newer...)
	cal, err := Calibrate(samples, AnchorSegments, FitOptions{}, flat, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	f3, f47 := cal.Set.Generations[GenClaude3], cal.Set.Generations[GenClaude47]
	if f3 == nil || f47 == nil || f3.Source != "fitted" || f47.Source != "fitted" {
		t.Fatalf("generations: %+v", cal.Set.Generations)
	}
	// The recovered factor: tokens the two fits give the newer sessions'
	// content.
	var n3, n47 float64
	v3, v47 := f3.vector(), f47.vector()
	for _, s := range newer {
		x := s.Calls[len(s.Calls)-1].X
		for j := range x {
			n3 += v3[j] * x[j]
			n47 += v47[j] * x[j]
		}
	}
	if got := n47 / n3; math.Abs(got-ratio)/ratio > 0.03 {
		t.Errorf("recovered factor %.3f, want %.2f ± 3%%", got, ratio)
	}
	for _, g := range []*Factors{f3, f47} {
		if g.Fit.HeldOut == nil || g.Fit.HeldOut.Median > 0.01 || g.Fit.InSample.Median > 0.01 {
			t.Errorf("errors on exact data: in %+v held out %+v", g.Fit.InSample, g.Fit.HeldOut)
		}
	}
	// o200k had no calls: derived from claude-3's fit, with a note.
	if o := cal.Set.Generations[GenO200k]; o == nil || o.Source != "derived" || len(cal.Notes) == 0 {
		t.Errorf("o200k: %+v, notes %v", o, cal.Notes)
	}
	// k-fold by sample: every sample is measured out of its fold.
	folds := make([]int, len(samples))
	for i := range folds {
		folds[i] = i % 3
	}
	kf, err := Calibrate(samples, AnchorSegments, FitOptions{}, flat, true, folds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range samples {
		if len(kf.HeldOut[i]) != len(kf.InSample[i]) || len(kf.HeldOut[i]) == 0 {
			t.Errorf("sample %d: %d held-out errors for %d in sample", i, len(kf.HeldOut[i]), len(kf.InSample[i]))
		}
	}
	// One set fitted over both generations cannot do as well.
	single, err := Fit(samples, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i := range newer {
		for _, e := range SampleErrors(&newer[i], single) {
			worst = max(worst, math.Abs(e))
		}
	}
	if worst < 0.05 {
		t.Errorf("one factor set fits both tokenizers (worst error %.3f): the test does not exercise generations", worst)
	}
}

// growFeatures adds one call's worth of random content to x: what a call
// adds to the context in the synthetic samples of the fitting tests.
func growFeatures(rng *rand.Rand, x *features) {
	x[fProse] += float64(rng.IntN(400))
	x[fThinking] += float64(rng.IntN(3)) * float64(rng.IntN(800))
	x[fToolInput] += float64(rng.IntN(300))
	x[fToolOutput] += float64(rng.IntN(20000))
	x[fMessage] += float64(1 + rng.IntN(3))
	n := float64(rng.IntN(4))
	x[fToolCall] += n
	x[fToolResult] += n
	x[fToolParam] += n * float64(1+rng.IntN(3))
}

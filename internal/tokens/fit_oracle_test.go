package tokens

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// noisy builds samples of three generations with what real sessions have
// and synthetic does not: unrecorded content on some calls, incomplete
// calls, anchors mid-session, rarely changing quantities (near the
// support threshold) and a few huge outliers.
func noisy(seed uint64, files int) []Sample {
	rng := rand.New(rand.NewPCG(seed, 2))
	truth := &Factors{Prose: 0.3, Injected: 0.355, Thinking: 0.45, Signature: 0.2, ToolInput: 0.35, ToolOutput: 0.31,
		Message: 4, ToolCall: 22, ToolParam: 27, ToolResult: 0, Image: 1600}
	gens := []string{GenClaude3, GenClaude47, "", "made-up-tokenizer"}
	var out []Sample
	for f := 0; f < files; f++ {
		g := gens[rng.IntN(len(gens))]
		v := truth.vector()
		if g == GenClaude47 {
			v = truth.Scaled(1.46).vector()
		}
		s := Sample{Path: "f" + string(rune('a'+f%26)) + string(rune('a'+f/26)), Gen: g}
		var x features
		seg := 0
		calls := 2 + rng.IntN(60)
		for k := 0; k < calls; k++ {
			anchor := k == 0 || rng.IntN(25) == 0
			if anchor {
				seg++
			}
			if k > 0 {
				growFeatures(rng, &x)
				if rng.IntN(40) == 0 {
					x[fImage]++
				}
				if rng.IntN(15) == 0 {
					x[fInjected] += float64(rng.IntN(5000))
				}
			}
			real := 20000.0
			for j := range v {
				real += v[j] * x[j]
			}
			switch rng.IntN(30) {
			case 0:
				real += 30000
			case 1:
				real *= 0.8
			}
			s.Calls = append(s.Calls, SampleCall{X: x, Real: math.Round(real), Anchor: anchor, Complete: rng.IntN(20) != 0, Segment: seg})
		}
		out = append(out, s)
	}
	// Changes int32 cannot hold exactly: fractions, and beyond its range.
	if len(out) > 2 {
		for k := range out[1].Calls {
			out[1].Calls[k].X[fProse] += 0.25 * float64(k)
		}
		for k := range out[2].Calls {
			out[2].Calls[k].X[fToolOutput] += 3e9 * float64(k)
		}
	}
	return out
}

// TestCalibrateMatchesReference: Calibrate gives, bit for bit, what the
// implementation before its buffers were reused gave (fit_ref_test.go):
// factors, notes, and every in-sample and held-out error, with folds by
// path hash and leave-one-file-out.
func TestCalibrateMatchesReference(t *testing.T) {
	models, err := ParseModels([]byte("tokenizers: {claude-3: 1, claude-4.7: 1.3, o200k: 0.9}\nmodels:\n  - {pattern: \"*\", tokenizer: claude-3, windows: [200000]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		seed  uint64
		files int
		folds bool
		min   int
	}{
		{"tenfold", 1, 80, true, 0},
		{"tenfold-high-support", 2, 120, true, 60},
		{"leave-one-out", 3, 25, false, 0},
		{"few", 4, 3, true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			samples := noisy(tc.seed, tc.files)
			var folds []int
			if tc.folds {
				for i := range samples {
					h := fnv.New32a()
					h.Write([]byte(samples[i].Path))
					folds = append(folds, int(h.Sum32()%10))
				}
			}
			opt := FitOptions{MinSupport: tc.min}
			got, err := Calibrate(samples, AnchorSegments, opt, models, true, folds)
			if err != nil {
				t.Fatal(err)
			}
			want, err := refCalibrate(samples, AnchorSegments, opt, models, true, folds)
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got.Set)
			wj, _ := json.Marshal(want.Set)
			if string(gj) != string(wj) {
				t.Errorf("factors differ:\n got %s\nwant %s", gj, wj)
			}
			if !slices.Equal(got.Notes, want.Notes) {
				t.Errorf("notes %q, want %q", got.Notes, want.Notes)
			}
			same := func(what string, a, b [][]float64) {
				if len(a) != len(b) {
					t.Fatalf("%s: %d samples, want %d", what, len(a), len(b))
				}
				for i := range a {
					if len(a[i]) != len(b[i]) {
						t.Fatalf("%s: sample %d: %d errors, want %d", what, i, len(a[i]), len(b[i]))
					}
					for k := range a[i] {
						if math.Float64bits(a[i][k]) != math.Float64bits(b[i][k]) {
							t.Fatalf("%s: sample %d call %d: %v, want %v", what, i, k, a[i][k], b[i][k])
						}
					}
				}
			}
			same("in sample", got.InSample, want.InSample)
			same("held out", got.HeldOut, want.HeldOut)
			f, err := Fit(samples, opt)
			if err != nil {
				t.Fatal(err)
			}
			rf, err := refFitSteps(refSteps(samples), opt.withDefaults(), nil)
			if err != nil {
				t.Fatal(err)
			}
			fj, _ := json.Marshal(f)
			rj, _ := json.Marshal(rf)
			if string(fj) != string(rj) {
				t.Errorf("Fit:\n got %s\nwant %s", fj, rj)
			}
		})
	}
}

// BenchmarkCalibrate: ten folds by path hash over noisy samples, the
// fitting code (new) against the former one (ref); -cpu 1 compares CPU.
func BenchmarkCalibrate(b *testing.B) {
	samples := noisy(5, 1500)
	folds := make([]int, len(samples))
	for i := range samples {
		h := fnv.New32a()
		h.Write([]byte(samples[i].Path + string(rune(i))))
		folds[i] = int(h.Sum32() % 10)
	}
	for _, c := range []struct {
		name string
		fn   func([]Sample, Anchoring, FitOptions, *Models, bool, []int) (*Calibration, error)
	}{{"new", Calibrate}, {"ref", refCalibrate}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.fn(samples, AnchorSegments, FitOptions{}, nil, true, folds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package tokens

// The fitting code as it was before it reused buffers and index lists: the
// oracle TestCalibrateMatchesReference compares Calibrate with, bit for bit.

import (
	"fmt"
	"math"
	"slices"
)

// step is the change between two consecutive complete calls of a segment.
type refStep struct {
	dx    features
	dreal float64
	file  int
	gen   string
}

func refSteps(samples []Sample) []refStep {
	var out []refStep
	for f := range samples {
		cs := samples[f].Calls
		for k := 1; k < len(cs); k++ {
			a, b := &cs[k-1], &cs[k]
			if b.Anchor || a.Segment != b.Segment || !a.Complete || !b.Complete {
				continue
			}
			st := refStep{dreal: b.Real - a.Real, file: f, gen: genOf(&samples[f])}
			for i := range st.dx {
				st.dx[i] = b.X[i] - a.X[i]
			}
			out = append(out, st)
		}
	}
	return out
}

// fitSteps fits on every step except those of the files skip reports (nil
// skips none).
func refFitSteps(st []refStep, opt FitOptions, skip func(file int) bool) (*Factors, error) {
	prior := opt.Prior.vector()
	var support [nFeatures]int
	n := 0
	for i := range st {
		if skip != nil && skip(st[i].file) {
			continue
		}
		n++
		for j, x := range st[i].dx {
			if x != 0 {
				support[j]++
			}
		}
	}
	if n == 0 {
		return nil, ErrNoData
	}
	// free are the fitted features; pos[j] is feature j's place in free,
	// or -1 when it keeps the prior.
	var free []int
	var pos [nFeatures]int
	var fixedNames []string
	for j := 0; j < nFeatures; j++ {
		if j != fToolResult && support[j] >= opt.MinSupport {
			pos[j] = len(free)
			free = append(free, j)
		} else {
			pos[j] = -1
			fixedNames = append(fixedNames, featureNames[j])
		}
	}
	robust := make([]float64, len(st))
	for i := range robust {
		robust[i] = 1
	}
	// Per step, once: the target less the fixed factors' share, and the
	// fitted quantities that changed (most steps change few of them, so
	// the normal equations are summed over those pairs only).
	ys := make([]float64, len(st))
	nz := make([][]int, len(st))
	for i := range st {
		s := &st[i]
		if skip != nil && skip(s.file) {
			continue
		}
		y := s.dreal
		for j := 0; j < nFeatures; j++ {
			if pos[j] < 0 {
				y -= prior[j] * s.dx[j]
			} else if s.dx[j] != 0 {
				nz[i] = append(nz[i], j)
			}
		}
		ys[i] = y
	}
	var sol []float64
	for iter := 0; iter < 20; iter++ {
		m := len(free)
		A := make([][]float64, m)
		for a := range A {
			A[a] = make([]float64, m)
		}
		b := make([]float64, m)
		for i := range st {
			s := &st[i]
			if skip != nil && skip(s.file) {
				continue
			}
			w := robust[i] / (200 + math.Abs(s.dreal))
			for _, ja := range nz[i] {
				xa := s.dx[ja]
				row := A[pos[ja]]
				for _, jc := range nz[i] {
					row[pos[jc]] += w * xa * s.dx[jc]
				}
				b[pos[ja]] += w * xa * ys[i]
			}
		}
		next := nnls(A, b)
		// Huber weights on the relative step residuals.
		changed := false
		for i := range st {
			s := &st[i]
			if skip != nil && skip(s.file) {
				continue
			}
			pred := 0.0
			for j := 0; j < nFeatures; j++ {
				fj := prior[j]
				if k := pos[j]; k >= 0 {
					fj = next[k]
				}
				pred += fj * s.dx[j]
			}
			e := math.Abs(pred-s.dreal) / (200 + math.Abs(s.dreal))
			w := 1.0
			if e > huberK {
				w = huberK / e
			}
			if math.Abs(w-robust[i]) > 1e-6 {
				changed = true
			}
			robust[i] = w
		}
		sol = next
		if !changed {
			break
		}
	}
	v := prior
	var fittedNames []string
	for k, j := range free {
		v[j] = sol[k]
		fittedNames = append(fittedNames, featureNames[j])
	}
	out := &Factors{Source: "fitted"}
	out.setVector(v)
	out.Fit = &FitInfo{Steps: n, Fitted: fittedNames, Fixed: fixedNames}
	return out, nil
}

// fitSet fits every generation on the steps of the files skip lets in: the
// reference generation first (prior: opt.Prior), then each other one with
// the reference fit times the tokenizer's ratio as prior; a generation
// without steps gets that product as is, with a note.
func refFitSet(st []refStep, gens []string, opt FitOptions, models *Models, skip func(int) bool) (*FactorSet, []string, error) {
	byGen := map[string][]refStep{}
	for i := range st {
		if skip == nil || !skip(st[i].file) {
			byGen[st[i].gen] = append(byGen[st[i].gen], st[i])
		}
	}
	if len(byGen) == 0 {
		return nil, nil, ErrNoData
	}
	set := &FactorSet{Generations: map[string]*Factors{}}
	ref := opt.Prior
	if len(byGen[ReferenceGeneration]) > 0 {
		f, err := refFitSteps(byGen[ReferenceGeneration], opt, nil)
		if err != nil {
			return nil, nil, err
		}
		ref = f
	}
	set.Generations[ReferenceGeneration] = ref
	var notes []string
	if ref.Source != "fitted" {
		notes = append(notes, fmt.Sprintf("%s: no calls of this tokenizer, using the prior factors", ReferenceGeneration))
	}
	for _, g := range gens {
		if g == ReferenceGeneration {
			continue
		}
		r := models.Ratio(g)
		prior := ref.Scaled(r)
		prior.Source = "derived"
		if len(byGen[g]) == 0 {
			set.Generations[g] = prior
			notes = append(notes, fmt.Sprintf("%s: no calls of this tokenizer, using %s's factors × %.2f", g, ReferenceGeneration, r))
			continue
		}
		o := opt
		o.Prior = prior
		f, err := refFitSteps(byGen[g], o, nil)
		if err != nil {
			return nil, nil, err
		}
		set.Generations[g] = f
	}
	return set, notes, nil
}

// refCalibrate (the implementation before the scratch buffers) fits factors per tokenizer generation on all samples and
// measures them: in sample, and held out (when heldOut) by fitting without
// each fold of samples in turn and measuring the fold. folds gives each
// sample's fold (nil: every sample is its own, leave-one-file-out).
func refCalibrate(samples []Sample, mode Anchoring, opt FitOptions, models *Models, heldOut bool, folds []int) (*Calibration, error) {
	opt = opt.withDefaults()
	st := refSteps(samples)
	gens := models.Generations()
	for i := range samples {
		if !slices.Contains(gens, samples[i].Gen) && samples[i].Gen != "" {
			gens = append(gens, samples[i].Gen)
		}
	}
	set, notes, err := refFitSet(st, gens, opt, models, nil)
	if err != nil {
		return nil, err
	}
	cal := &Calibration{Set: set, Notes: notes, InSample: make([][]float64, len(samples))}
	type acc struct {
		in, ho      []float64
		calls, tran int
	}
	per := map[string]*acc{}
	for i := range samples {
		g := genOf(&samples[i])
		f, _ := set.For(g, models)
		cal.InSample[i] = SampleErrors(&samples[i], f)
		a := per[g]
		if a == nil {
			a = &acc{}
			per[g] = a
		}
		a.in = append(a.in, cal.InSample[i]...)
		a.calls += len(samples[i].Calls)
		if len(samples[i].Calls) > 0 {
			a.tran++
		}
	}
	if heldOut {
		cal.HeldOut = make([][]float64, len(samples))
		fold := func(i int) int {
			if folds == nil {
				return i
			}
			return folds[i]
		}
		var ids []int
		seen := map[int]bool{}
		for i := range samples {
			if k := fold(i); !seen[k] && len(samples[i].Calls) >= 2 {
				seen[k] = true
				ids = append(ids, k)
			}
		}
		for _, k := range ids {
			g, _, err := refFitSet(st, gens, opt, models, func(f int) bool { return fold(f) == k })
			if err != nil {
				continue
			}
			for i := range samples {
				if fold(i) != k {
					continue
				}
				f, _ := g.For(genOf(&samples[i]), models)
				cal.HeldOut[i] = SampleErrors(&samples[i], f)
				per[genOf(&samples[i])].ho = append(per[genOf(&samples[i])].ho, cal.HeldOut[i]...)
			}
		}
	}
	for g, f := range set.Generations {
		a := per[g]
		if f.Fit == nil {
			f.Fit = &FitInfo{}
		}
		f.Fit.Anchoring = mode.String()
		if a == nil {
			continue
		}
		f.Fit.Transcripts, f.Fit.Calls = a.tran, a.calls
		f.Fit.InSample = AbsErrStats(a.in)
		if heldOut {
			s := AbsErrStats(a.ho)
			f.Fit.HeldOut = &s
		}
	}
	return cal, nil
}

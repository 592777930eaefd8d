package tokens

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/compactbench/compactbench/internal/transcript"
)

// FitInfo records how a set of factors was fitted.
type FitInfo struct {
	// Inputs are the paths calibrate was given; Transcripts, Calls and Steps
	// count what the fit used.
	Inputs      []string `json:"inputs,omitempty"`
	Transcripts int      `json:"transcripts"`
	Calls       int      `json:"calls"`
	Steps       int      `json:"steps"`
	Anchoring   string   `json:"anchoring"`
	// Fitted are the factors the data determined; Fixed kept their prior
	// value (too little data, or not separable from another factor).
	Fitted []string `json:"fitted"`
	Fixed  []string `json:"fixed"`
	// InSample is the calibrated ruler's error on the calls it was fitted
	// on; HeldOut the error of factors fitted without each call's file
	// (leave-one-file-out), when computed.
	InSample ErrStats  `json:"in_sample"`
	HeldOut  *ErrStats `json:"held_out,omitempty"`
}

// SampleCall is one recorded call reduced to what fitting needs.
type SampleCall struct {
	// X are the calibrated model's raw quantities of the call's prompt
	// (bytes per class, counts of messages, tool calls, parameters, images).
	X        features
	Real     float64
	Anchor   bool
	Complete bool
	// Segment numbers the anchored stretches of calls.
	Segment int
}

// Sample is what one transcript contributes to a fit.
type Sample struct {
	Path string
	// Gen is the tokenizer generation of the transcript's model.
	Gen   string
	Calls []SampleCall
}

// featureSums is the visitor that keeps the prompt's raw quantities.
type featureSums struct {
	base, thinkCur, thinkOld features
	seg                      int
	out                      []SampleCall
}

func (s *featureSums) reset() {
	s.base, s.thinkCur, s.thinkOld = features{}, features{}, features{}
}

func (s *featureSums) add(m *transcript.Message) {
	s.base[fMessage]++
	for j := range m.Blocks {
		b := &m.Blocks[j]
		if b.Kind == transcript.BlockThinking {
			blockFeatures(b, &s.thinkCur)
		} else {
			blockFeatures(b, &s.base)
		}
	}
}

func (s *featureSums) turn() {
	for i := range s.thinkCur {
		s.thinkOld[i] += s.thinkCur[i]
	}
	s.thinkCur = features{}
}

func (s *featureSums) replace(old, with *transcript.Block) {
	var a, b features
	blockFeatures(old, &a)
	blockFeatures(with, &b)
	for i := range a {
		s.base[i] += b[i] - a[i]
	}
}

func (s *featureSums) call(p *point) {
	x := s.base
	for i := range x {
		x[i] += s.thinkCur[i]
		if !p.strip {
			x[i] += s.thinkOld[i]
		}
	}
	if p.anchor {
		s.seg++
	}
	s.out = append(s.out, SampleCall{X: x, Real: float64(p.real), Anchor: p.anchor, Complete: p.complete, Segment: s.seg})
}

func (s *featureSums) boundary(int, *transcript.Compaction, bool) {}

// Collect reduces a transcript to its calls' prompt quantities (models: nil
// for the shipped table).
func Collect(t *transcript.Transcript, mode Anchoring, models *Models) Sample {
	s := &featureSums{}
	walk(t, mode, models, s)
	return Sample{Path: t.Path, Gen: models.Lookup(t.Model).Tokenizer, Calls: s.out}
}

// steps lists the steps of every sample, in sample order.
func steps(samples []Sample) *stepSet {
	n := 0
	for f := range samples {
		n += max(len(samples[f].Calls)-1, 0)
	}
	st := &stepSet{}
	st.grow(n)
	for f := range samples {
		st.appendSteps(&samples[f], f)
	}
	return st
}

// FitOptions tune Fit.
type FitOptions struct {
	// Prior supplies the factors that cannot be fitted (default:
	// DefaultFactors).
	Prior *Factors
	// MinSupport is the number of steps a quantity must change in to be
	// fitted (default 20).
	MinSupport int
}

// ErrNoData is returned when a corpus has no usable consecutive calls.
var ErrNoData = errors.New("no consecutive API calls with usage to fit on")

// huberK is the relative step residual beyond which a step's weight is
// reduced (Huber loss): steps with content the transcript does not show
// (summarised thinking, unrecorded reminders) should not drag the factors.
const huberK = 0.5

// Fit fits the calibrated factors on samples: weighted non-negative least
// squares on the growth of real context between consecutive calls of a
// segment, Δreal ≈ Σ factor × Δquantity, each step weighted by
// 1/(200 + |Δreal|) (so small and large steps weigh alike in relative
// terms), with Huber reweighting of outlying steps.
//
// Quantities that change in fewer than MinSupport steps keep the prior's
// factor; the tool_result constant always does, as every tool result comes
// with a tool call and the data cannot tell their constants apart.
func Fit(samples []Sample, opt FitOptions) (*Factors, error) {
	st := steps(samples)
	ids := make([]int32, st.n())
	for i := range ids {
		ids[i] = int32(i)
	}
	return fitSteps(st, ids, noFold, opt.withDefaults(), &fitScratch{})
}

// withDefaults fills in the options left zero.
func (o FitOptions) withDefaults() FitOptions {
	if o.Prior == nil {
		o.Prior = DefaultFactors()
	}
	if o.MinSupport == 0 {
		o.MinSupport = 20
	}
	return o
}

// fitScratch holds the buffers of fitSteps, reused from one fit to the
// next (one per goroutine).
type fitScratch struct {
	robust, ys []float64
	// acc and accB are normalEquations' sums by feature; a, b and rows
	// the normal equations it returns.
	acc  [accStride * accStride]float64
	accB [accStride]float64
	a, b []float64
	rows [][]float64
	// cached says that cnt, cj, cx and den hold the fit's steps as
	// normalEquations reads them (cacheChanges).
	cached bool
	cnt    []uint8
	cj     []uint8
	cx     []float64
	den    []float64
}

// maxCached bounds the steps and the changes cacheChanges keeps (about
// 1.2 MB per fitting goroutine at most, beside the 16 bytes a step robust
// and ys take); a fit of more steps reads them from the step set at every
// iteration. The real sessions' fits have about 5,000 steps and 30,000
// changes.
var maxCached = 1 << 16

// accStride is the row length of fitScratch.acc: a power of two not
// below nFeatures, so that masking an index keeps it in range.
const accStride = 16

// The build fails if nFeatures outgrows accStride (an index mask would
// then wrap silently).
var _ [accStride - nFeatures]struct{}

// noFold is the skip of fitSteps that skips no step (folds are not
// negative).
const noFold = math.MinInt

// grow returns buf resized to n (its old contents are not kept).
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// fitSteps fits on the steps ids[0], ids[1], ... of st (in that order)
// that are not of fold skip (noFold: every one).
func fitSteps(st *stepSet, ids []int32, skip int, opt FitOptions, sc *fitScratch) (*Factors, error) {
	prior := opt.Prior.vector()
	lay, n := fitLayoutOf(st, ids, skip, opt.MinSupport)
	if n == 0 {
		return nil, ErrNoData
	}
	sc.robust = grow(sc.robust, n)
	robust := sc.robust
	for k := range robust {
		robust[k] = 1
	}
	sc.ys = grow(sc.ys, n)
	ys := sc.ys
	fixedTargets(st, ids, skip, &lay, &prior, ys)
	lay.cacheChanges(st, ids, skip, n, sc)
	var sol []float64
	for iter := 0; iter < 20; iter++ {
		A, b := lay.normalEquations(st, ids, skip, robust, ys, sc)
		next := nnls(A, b)
		changed := lay.reweight(st, ids, skip, prior, next, robust)
		sol = next
		if !changed {
			break
		}
	}
	v := prior
	var fittedNames []string
	for k, j := range lay.free {
		v[j] = sol[k]
		fittedNames = append(fittedNames, featureNames[j])
	}
	out := &Factors{Source: "fitted"}
	out.setVector(v)
	out.Fit = &FitInfo{Steps: n, Fitted: fittedNames, Fixed: lay.fixedNames}
	return out, nil
}

// fitLayout says which features a fit solves for: free are the fitted
// features; pos[j] is feature j's place in free, or -1 when it keeps the
// prior; freeMask has the fitted features' bits.
type fitLayout struct {
	free       []int
	pos        [nFeatures]int
	fixedNames []string
	freeMask   uint16
}

// fitLayoutOf counts the steps of ids not of fold skip (n) and the steps
// in which each feature changes, and frees the features (other than the
// tool_result constant) that change in at least minSupport of them.
func fitLayoutOf(st *stepSet, ids []int32, skip, minSupport int) (lay fitLayout, n int) {
	var support [nFeatures]int
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		n++
		for m := st.nz[i] &^ wideBit; m != 0; m &= m - 1 {
			support[bits.TrailingZeros16(m)]++
		}
	}
	for j := 0; j < nFeatures; j++ {
		if j != fToolResult && support[j] >= minSupport {
			lay.pos[j] = len(lay.free)
			lay.free = append(lay.free, j)
			lay.freeMask |= 1 << j
		} else {
			lay.pos[j] = -1
			lay.fixedNames = append(lay.fixedNames, featureNames[j])
		}
	}
	return lay, n
}

// fixedTargets fills ys, once per step, with the step's target less the
// fixed factors' share.
func fixedTargets(st *stepSet, ids []int32, skip int, lay *fitLayout, prior *features, ys []float64) {
	var x features
	k := 0
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		y, _ := st.load(i, &x)
		for j := 0; j < nFeatures; j++ {
			if lay.pos[j] < 0 {
				y -= prior[j] * x[j]
			}
		}
		ys[k] = y
		k++
	}
}

// normalEquations sums the weighted normal equations of the fitted
// features over the steps, each step adding only the pairs of fitted
// quantities that changed (most steps change few of them), in feature
// order. The sums are kept by feature (sc.acc, sc.accB: the fitted
// block of an nFeatures² matrix) and read into A and b at the end, so a
// step's changes are read where they are kept, with no copy per step; each
// entry gets the same terms in the same order as summing straight into
// A[pos[a]][pos[c]] (normalEquationsRef in the tests).
func (lay *fitLayout) normalEquations(st *stepSet, ids []int32, skip int, robust, ys []float64, sc *fitScratch) ([][]float64, []float64) {
	acc, accB := &sc.acc, &sc.accB
	for _, a := range lay.free {
		accB[a] = 0
		for _, c := range lay.free {
			acc[a*accStride+c] = 0
		}
	}
	if sc.cached {
		sumCached(sc, robust, ys)
	} else {
		lay.sumSteps(st, ids, skip, robust, ys, sc)
	}
	m := len(lay.free)
	sc.a = grow(sc.a, m*m)
	sc.b = grow(sc.b, m)
	sc.rows = grow(sc.rows, m)
	for a, ja := range lay.free {
		row := sc.a[a*m:][:m]
		for c, jc := range lay.free {
			row[c] = acc[ja*accStride+jc]
		}
		sc.rows[a] = row
		sc.b[a] = accB[ja]
	}
	return sc.rows, sc.b
}

// sumSteps adds the steps' terms of the normal equations to sc.acc and
// sc.accB, reading each step's changes from the step set.
func (lay *fitLayout) sumSteps(st *stepSet, ids []int32, skip int, robust, ys []float64, sc *fitScratch) {
	acc, accB := &sc.acc, &sc.accB
	var fj [accStride]uint8
	var fx [accStride]float64
	k := -1
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		k++
		mk := st.nz[i]
		nz := mk &^ wideBit
		fm := nz & lay.freeMask
		if fm == 0 {
			continue
		}
		w := robust[k] / (200 + math.Abs(st.dreal[i]))
		// the fitted quantities that changed, in feature order, and their
		// changes (the q-th change of a step is that of nz's q-th bit)
		n, at := 0, st.at[i]
		if mk&wideBit != 0 {
			for f := fm; f != 0; f &= f - 1 {
				j := bits.TrailingZeros16(f)
				fj[n&(accStride-1)], fx[n&(accStride-1)] = uint8(j), st.wides[int(at)+bits.OnesCount16(nz&(1<<j-1))]
				n++
			}
		} else {
			vals := st.ints[at/stepChunk][at%stepChunk:]
			for f := fm; f != 0; f &= f - 1 {
				j := bits.TrailingZeros16(f)
				fj[n&(accStride-1)], fx[n&(accStride-1)] = uint8(j), float64(vals[bits.OnesCount16(nz&(1<<j-1))])
				n++
			}
		}
		addTerms(acc, accB, fj[:n], fx[:n], w, ys[k])
	}
}

// sumCached is sumSteps reading the changes cacheChanges kept.
func sumCached(sc *fitScratch, robust, ys []float64) {
	acc, accB := &sc.acc, &sc.accB
	o := 0
	for k, c := range sc.cnt {
		if c == 0 {
			continue
		}
		w := robust[k] / sc.den[k]
		addTerms(acc, accB, sc.cj[o:o+int(c)], sc.cx[o:o+int(c)], w, ys[k])
		o += int(c)
	}
}

// addTerms adds one step's terms: the changed fitted quantities js
// (features, in order) with their changes xs, weight w and target y.
func addTerms(acc *[accStride * accStride]float64, accB *[accStride]float64, js []uint8, xs []float64, w, y float64) {
	xs = xs[:len(js)]
	for a, ja := range js {
		// w * xa * x is (w * xa) * x
		wxa := w * xs[a]
		row := (*[accStride]float64)(acc[int(ja&(accStride-1))*accStride:])
		for c, jc := range js {
			row[jc&(accStride-1)] += wxa * xs[c]
		}
		accB[ja&(accStride-1)] += wxa * y
	}
}

// cacheChanges keeps, for each of the n steps of the fit, what
// normalEquations reads of it: the fitted quantities that changed (cnt of
// them, in cj) and their changes (cx), and 200 + |Δreal| (den); when they
// exceed maxCached, it keeps nothing and the steps are read from st.
func (lay *fitLayout) cacheChanges(st *stepSet, ids []int32, skip, n int, sc *fitScratch) {
	sc.cached = false
	total := 0
	for _, i := range ids {
		if int(st.fold[i]) != skip {
			total += bits.OnesCount16(st.nz[i] & lay.freeMask)
		}
	}
	if n > maxCached || total > maxCached {
		return
	}
	sc.cnt, sc.den = grow(sc.cnt, n), grow(sc.den, n)
	sc.cj, sc.cx = grow(sc.cj, total)[:0], grow(sc.cx, total)[:0]
	var xs features
	k := -1
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		k++
		dreal, nz := st.changes(i, &xs)
		sc.den[k] = 200 + math.Abs(dreal)
		c, q := 0, 0
		for m := nz; m != 0; m &= m - 1 {
			if j := bits.TrailingZeros16(m); lay.freeMask&(1<<j) != 0 {
				sc.cj = append(sc.cj, uint8(j))
				sc.cx = append(sc.cx, xs[q])
				c++
			}
			q++
		}
		sc.cnt[k] = uint8(c)
	}
	sc.cached = true
}

// reweight sets robust to the Huber weights of the steps' relative
// residuals under the factors prior with the fitted ones from next, and
// reports whether any weight moved by more than 1e-6. A quantity that did
// not change adds a zero term to the prediction, which leaves the sum as
// it is when every factor is finite.
func (lay *fitLayout) reweight(st *stepSet, ids []int32, skip int, prior features, next, robust []float64) bool {
	fv := prior
	for a, j := range lay.free {
		fv[j] = next[a]
	}
	finite := true
	for _, x := range fv {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			finite = false
		}
	}
	changed := false
	var x features
	k := -1
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		k++
		dreal := st.dreal[i]
		pred := 0.0
		if mk := st.nz[i]; finite && mk&wideBit == 0 {
			at := st.at[i]
			vals := st.ints[at/stepChunk][at%stepChunk:]
			c := 0
			for mj := mk; mj != 0; mj &= mj - 1 {
				pred += fv[bits.TrailingZeros16(mj)] * float64(vals[c])
				c++
			}
		} else if finite {
			vals := st.wides[st.at[i]:]
			c := 0
			for mj := mk &^ wideBit; mj != 0; mj &= mj - 1 {
				pred += fv[bits.TrailingZeros16(mj)] * vals[c]
				c++
			}
		} else {
			st.load(i, &x)
			for j := 0; j < nFeatures; j++ {
				pred += fv[j] * x[j]
			}
		}
		e := math.Abs(pred-dreal) / (200 + math.Abs(dreal))
		w := 1.0
		if e > huberK {
			w = huberK / e
		}
		if math.Abs(w-robust[k]) > 1e-6 {
			changed = true
		}
		robust[k] = w
	}
	return changed
}

// measuredCalls yields the calls of a sample the calibrated ruler is
// measured on (complete, not anchors, with a real context), each with its
// governing anchor.
func measuredCalls(s *Sample) iter.Seq2[*SampleCall, *SampleCall] {
	return func(yield func(*SampleCall, *SampleCall) bool) {
		var anchor *SampleCall
		for k := range s.Calls {
			c := &s.Calls[k]
			if c.Anchor {
				anchor = c
				continue
			}
			if anchor == nil || !c.Complete || c.Real <= 0 {
				continue
			}
			if !yield(anchor, c) {
				return
			}
		}
	}
}

// SampleErrors returns the calibrated ruler's level errors with factors f on
// the complete, non-anchor calls of a sample: est = real(anchor) +
// f·(X − X(anchor)), the same definition as EstimateCalls up to per-block
// rounding.
func SampleErrors(s *Sample, f *Factors) []float64 {
	v := f.vector()
	var errs []float64
	for anchor, c := range measuredCalls(s) {
		est := anchor.Real
		for j := range v {
			est += v[j] * (c.X[j] - anchor.X[j])
		}
		errs = append(errs, (est-c.Real)/c.Real)
	}
	return errs
}

// Calibration is the result of Calibrate.
type Calibration struct {
	// Set holds the factors of every generation of the model table: fitted
	// where the samples have steps of it, derived otherwise.
	Set *FactorSet
	// Notes say which generations fell back to derived factors.
	Notes []string
	// InSample and HeldOut are per-sample errors (same order as the
	// samples, each with its generation's factors): of the fitted factors,
	// and of factors fitted without the sample's fold.
	InSample [][]float64
	HeldOut  [][]float64
}

// fitSet fits every generation on the steps byGen lists for it (indices
// into st, in order) that are not of fold skip (noFold: every one): the
// reference generation first (prior: opt.Prior), then each other one with
// the reference fit times the tokenizer's ratio as prior; a generation
// without steps gets that product as is, with a note.
func fitSet(st *stepSet, byGen map[string][]int32, skip int, gens []string, opt FitOptions, models *Models, sc *fitScratch) (*FactorSet, []string, error) {
	// has reports whether generation g has a step to fit on.
	has := func(g string) bool {
		for _, i := range byGen[g] {
			if int(st.fold[i]) != skip {
				return true
			}
		}
		return false
	}
	some := false
	for g := range byGen {
		some = some || has(g)
	}
	if !some {
		return nil, nil, ErrNoData
	}
	set := &FactorSet{Generations: map[string]*Factors{}}
	ref := opt.Prior
	if has(ReferenceGeneration) {
		f, err := fitSteps(st, byGen[ReferenceGeneration], skip, opt, sc)
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
		if !has(g) {
			set.Generations[g] = prior
			notes = append(notes, fmt.Sprintf("%s: no calls of this tokenizer, using %s's factors × %.2f", g, ReferenceGeneration, r))
			continue
		}
		o := opt
		o.Prior = prior
		f, err := fitSteps(st, byGen[g], skip, o, sc)
		if err != nil {
			return nil, nil, err
		}
		set.Generations[g] = f
	}
	return set, notes, nil
}

// Calibrate fits factors per tokenizer generation on all samples and
// measures them: in sample, and held out (when heldOut) by fitting without
// each fold of samples in turn and measuring the fold. folds gives each
// sample's fold (nil: every sample is its own, leave-one-file-out). The
// folds are fitted in parallel (GOMAXPROCS at once); the result does not
// depend on it.
func Calibrate(samples []Sample, mode Anchoring, opt FitOptions, models *Models, heldOut bool, folds []int) (*Calibration, error) {
	ff := NewFoldFit(opt, models)
	for i := range samples {
		k := i
		if folds != nil {
			k = folds[i]
		}
		ff.Add(&samples[i], k)
	}
	if err := ff.Fit(heldOut); err != nil {
		return nil, err
	}
	set := ff.Set()
	cal := &Calibration{Set: set, Notes: ff.Notes(), InSample: make([][]float64, len(samples))}
	if heldOut {
		cal.HeldOut = make([][]float64, len(samples))
	}
	type acc struct {
		in, ho      []float64
		calls, tran int
	}
	per := map[string]*acc{}
	for i := range samples {
		g := genOf(&samples[i])
		a := per[g]
		if a == nil {
			a = &acc{}
			per[g] = a
		}
		in, ho := ff.Errors(i, &samples[i])
		cal.InSample[i] = in
		a.in = append(a.in, in...)
		a.calls += len(samples[i].Calls)
		if len(samples[i].Calls) > 0 {
			a.tran++
		}
		if heldOut {
			cal.HeldOut[i] = ho
			a.ho = append(a.ho, ho...)
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

// FoldFit is Calibrate for samples too many to hold at once: it is given
// the samples one at a time (Add), keeps only their steps, fits (Fit), and
// is given them again in the same order to measure each (Errors).
type FoldFit struct {
	opt    FitOptions
	models *Models
	st     stepSet
	// gens are the model table's generations, then the samples' others
	// in order of appearance; all lists each generation's steps.
	gens []string
	all  map[string][]int32
	// folds is each sample's fold; ids the folds that have a sample of
	// two calls or more, in order of appearance.
	folds []int
	ids   []int
	seen  map[int]bool
	set   *FactorSet
	notes []string
	// held are the factor sets fitted without each fold of ids (nil
	// where the fold leaves nothing to fit on).
	held map[int]*FactorSet
}

// NewFoldFit returns an empty FoldFit (models: nil for the shipped table).
func NewFoldFit(opt FitOptions, models *Models) *FoldFit {
	return &FoldFit{opt: opt.withDefaults(), models: models, gens: models.Generations(),
		all: map[string][]int32{}, seen: map[int]bool{}}
}

// Grow makes room for n more steps (a sample of k calls has at most k−1),
// so that adding them does not copy the ones already kept.
func (c *FoldFit) Grow(n int) { c.st.grow(n) }

// Add takes the next sample, of the given fold; s is not kept.
func (c *FoldFit) Add(s *Sample, fold int) {
	c.folds = append(c.folds, fold)
	if !slices.Contains(c.gens, s.Gen) && s.Gen != "" {
		c.gens = append(c.gens, s.Gen)
	}
	if !c.seen[fold] && len(s.Calls) >= 2 {
		c.seen[fold] = true
		c.ids = append(c.ids, fold)
	}
	g := genOf(s)
	n := c.st.n()
	c.st.appendSteps(s, fold)
	for i := n; i < c.st.n(); i++ {
		c.all[g] = append(c.all[g], int32(i))
	}
}

// Fit fits every generation on all the samples and, when heldOut, again
// without each fold, GOMAXPROCS fits at once (the fit on all samples is
// one of them).
func (c *FoldFit) Fit(heldOut bool) error {
	var err error
	all := func(sc *fitScratch) {
		c.set, c.notes, err = fitSet(&c.st, c.all, noFold, c.gens, c.opt, c.models, sc)
	}
	if !heldOut {
		all(&fitScratch{})
		return err
	}
	sets := foldSets(&c.st, c.all, c.gens, c.opt, c.models, c.ids, all)
	if err != nil {
		return err
	}
	c.held = map[int]*FactorSet{}
	for x, k := range c.ids {
		if sets[x] != nil {
			c.held[k] = sets[x]
		}
	}
	return nil
}

// Set is the factor set fitted on every sample.
func (c *FoldFit) Set() *FactorSet { return c.set }

// Notes name the generations that had no steps to fit on.
func (c *FoldFit) Notes() []string { return c.notes }

// Errors measures sample i (the i-th given to Add, given again): the
// errors of the factors fitted on every sample, and of those fitted
// without its fold (nil when not fitted).
func (c *FoldFit) Errors(i int, s *Sample) (in, heldOut []float64) {
	g := genOf(s)
	f, _ := c.set.For(g, c.models)
	in = SampleErrors(s, f)
	if h := c.held[c.folds[i]]; h != nil {
		f, _ := h.For(g, c.models)
		heldOut = SampleErrors(s, f)
	}
	return in, heldOut
}

// foldSets fits a factor set without each fold of ids (nil where the fold
// leaves nothing to fit on), GOMAXPROCS fits at once, first calls first
// (given a worker's scratch) as one more: the results do not depend on
// which worker runs what. A worker's panic is raised again on the
// caller's goroutine once every worker has stopped.
func foldSets(st *stepSet, all map[string][]int32, gens []string, opt FitOptions, models *Models, ids []int, first func(*fitScratch)) []*FactorSet {
	sets := make([]*FactorSet, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(ids)+1)
	panics := make([]any, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil { // with the stack where it was raised
					panics[w] = fmt.Sprintf("%v\n\nraised on a fitting goroutine:\n%s", p, debug.Stack())
				}
			}()
			sc := &fitScratch{}
			for {
				x := int(next.Add(1) - 2)
				if x == -1 {
					first(sc)
					continue
				}
				if x >= len(ids) {
					return
				}
				if g, _, err := fitSet(st, all, ids[x], gens, opt, models, sc); err == nil {
					sets[x] = g
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p) // on the caller's goroutine, where a panic is an internal error
		}
	}
	return sets
}

// genOf is a sample's generation (the reference one when unset).
func genOf(s *Sample) string {
	if s.Gen == "" {
		return ReferenceGeneration
	}
	return s.Gen
}

// nnls solves min ||Ax − b|| over x ≥ 0 for the normal equations A (m×m,
// symmetric positive semi-definite) and b, by the Lawson–Hanson active-set
// method on column-scaled equations.
func nnls(A [][]float64, b []float64) []float64 {
	m := len(b)
	S, c, scale := scaleNormal(A, b)
	x := make([]float64, m)
	passive := make([]bool, m)
	for outer := 0; outer < 3*m; outer++ {
		best := nnlsEntering(S, c, x, passive)
		if best < 0 {
			break
		}
		passive[best] = true
		for inner := 0; inner < 3*m; inner++ {
			s := solvePassive(S, c, passive)
			var done bool
			x, done = nnlsMove(x, s, passive)
			if done {
				break
			}
		}
	}
	for i := range x {
		x[i] /= scale[i]
	}
	return x
}

// nnlsTol is the size below which nnls takes a gradient or a solution
// component as zero.
const nnlsTol = 1e-10

// scaleNormal scales the normal equations A, b by the square roots of A's
// diagonal (1 where it is zero), returning the scaled S, c and the scales.
func scaleNormal(A [][]float64, b []float64) (S [][]float64, c, scale []float64) {
	m := len(b)
	scale = make([]float64, m)
	for i := range scale {
		scale[i] = math.Sqrt(A[i][i])
		if scale[i] == 0 {
			scale[i] = 1
		}
	}
	S = make([][]float64, m)
	c = make([]float64, m)
	for i := range S {
		S[i] = make([]float64, m)
		for j := range S[i] {
			S[i][j] = A[i][j] / (scale[i] * scale[j])
		}
		c[i] = b[i] / scale[i]
	}
	return S, c, scale
}

// nnlsEntering is the active variable with the largest gradient c − Sx
// above nnlsTol, or -1 when there is none (x is optimal).
func nnlsEntering(S [][]float64, c, x []float64, passive []bool) int {
	best, bestW := -1, nnlsTol
	for i := range x {
		if passive[i] {
			continue
		}
		w := c[i]
		for j := range x {
			w -= S[i][j] * x[j]
		}
		if w > bestW {
			best, bestW = i, w
		}
	}
	return best
}

// solvePassive solves S s = c restricted to the passive variables (with a
// small ridge on the diagonal); the others are 0 in the result.
func solvePassive(S [][]float64, c []float64, passive []bool) []float64 {
	var idx []int
	for i := range passive {
		if passive[i] {
			idx = append(idx, i)
		}
	}
	M := make([][]float64, len(idx))
	for a, i := range idx {
		M[a] = make([]float64, len(idx)+1)
		for k, j := range idx {
			M[a][k] = S[i][j]
		}
		M[a][a] += 1e-9
		M[a][len(idx)] = c[i]
	}
	z := gaussSolve(M)
	s := make([]float64, len(passive))
	for a, i := range idx {
		s[i] = z[a]
	}
	return s
}

// nnlsMove takes the passive solution s when it is positive (done), or
// else moves x toward s as far as keeps it non-negative and makes the
// passive variables that reach zero active again.
func nnlsMove(x, s []float64, passive []bool) ([]float64, bool) {
	alpha, neg := 1.0, false
	for i := range s {
		if passive[i] && s[i] <= nnlsTol {
			neg = true
			if d := x[i] - s[i]; d > 0 {
				alpha = math.Min(alpha, x[i]/d)
			} else {
				alpha = 0
			}
		}
	}
	if !neg {
		return s, true
	}
	for i := range x {
		x[i] += alpha * (s[i] - x[i])
		if passive[i] && x[i] <= nnlsTol {
			passive[i] = false
			x[i] = 0
		}
	}
	return x, false
}

// gaussSolve solves the augmented system M (n×(n+1)) by Gaussian elimination
// with partial pivoting; singular directions get 0.
func gaussSolve(M [][]float64) []float64 {
	n := len(M)
	for col := 0; col < n; col++ {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(M[r][col]) > math.Abs(M[p][col]) {
				p = r
			}
		}
		M[col], M[p] = M[p], M[col]
		if math.Abs(M[col][col]) < 1e-300 {
			continue
		}
		for r := 0; r < n; r++ {
			if r == col || M[r][col] == 0 {
				continue
			}
			k := M[r][col] / M[col][col]
			for j := col; j <= n; j++ {
				M[r][j] -= k * M[col][j]
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		if math.Abs(M[i][i]) >= 1e-300 {
			x[i] = M[i][n] / M[i][i]
		}
	}
	return x
}

// SampleClasses names, for each error SampleErrors returns (same order), the
// content class that contributes most tokens (by factors f) to the prompt's
// growth since its anchor: where a call's error most likely comes from.
func SampleClasses(s *Sample, f *Factors) []string {
	v := f.vector()
	var out []string
	for anchor, c := range measuredCalls(s) {
		best, bestV := "", -1.0
		for j := range v {
			// structure constants are grouped with their class
			t := v[j] * (c.X[j] - anchor.X[j])
			name := featureNames[j]
			switch j {
			case fToolCall, fToolParam:
				name = featureNames[fToolInput]
				t += v[fToolInput] * (c.X[fToolInput] - anchor.X[fToolInput])
			case fToolResult:
				continue
			}
			if t > bestV {
				best, bestV = name, t
			}
		}
		out = append(out, best)
	}
	return out
}

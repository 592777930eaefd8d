package tokens

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
)

// normalEquationsRef is the straightforward normal equations: every step
// of the fit read densely (load), each pair of fitted quantities that
// changed summed into A[pos[a]][pos[c]], in step and feature order.
func normalEquationsRef(lay *fitLayout, st *stepSet, ids []int32, skip int, robust, ys []float64) ([][]float64, []float64) {
	m := len(lay.free)
	A := make([][]float64, m)
	for a := range A {
		A[a] = make([]float64, m)
	}
	b := make([]float64, m)
	var x features
	k := -1
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		k++
		dreal, _ := st.load(i, &x)
		w := robust[k] / (200 + math.Abs(dreal))
		for _, ja := range lay.free {
			if x[ja] == 0 && !math.IsNaN(x[ja]) {
				continue
			}
			for _, jc := range lay.free {
				if x[jc] == 0 && !math.IsNaN(x[jc]) {
					continue
				}
				A[lay.pos[ja]][lay.pos[jc]] += w * x[ja] * x[jc]
			}
			b[lay.pos[ja]] += w * x[ja] * ys[k]
		}
	}
	return A, b
}

// reweightRef is reweight with every quantity of every step in the
// prediction (a zero change adds a zero term).
func reweightRef(lay *fitLayout, st *stepSet, ids []int32, skip int, prior features, next, robust []float64) bool {
	fv := prior
	for a, j := range lay.free {
		fv[j] = next[a]
	}
	changed := false
	var x features
	k := -1
	for _, i := range ids {
		if int(st.fold[i]) == skip {
			continue
		}
		k++
		dreal, _ := st.load(i, &x)
		pred := 0.0
		for j := range x {
			pred += fv[j] * x[j]
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

// TestNormalEquationsMatchDense: the normal equations (read from the step
// set, and from the changes cacheChanges kept) and the Huber weights of a
// fit are, bit for bit, those of the straightforward dense sums, for every
// fold left out and for none, with robust weights other than 1, over steps
// in several chunks with fractions and values beyond int32 (wide steps),
// and with factors that are not finite.
func TestNormalEquationsMatchDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	samples := make([]Sample, 400)
	for f := range samples {
		s := &samples[f]
		var x features
		for range 2 + rng.IntN(400) {
			for j := range x {
				switch r := rng.IntN(10); {
				case r < 4:
				case r == 4 && rng.IntN(40) == 0:
					x[j] += 0.25
				case r == 5 && rng.IntN(40) == 0:
					x[j] += 4e9
				case j == fImage && rng.IntN(8) != 0: // rarely changes: fixed at a high support
				default:
					x[j] += float64(rng.IntN(50000) - 500)
				}
			}
			s.Calls = append(s.Calls, SampleCall{X: x, Real: float64(rng.IntN(1e6)), Complete: rng.IntN(12) != 0})
		}
	}
	const folds = 5
	st := &stepSet{}
	for f := range samples {
		st.appendSteps(&samples[f], f%folds)
	}
	if len(st.ints) < 2 || len(st.wides) == 0 {
		t.Fatalf("%d chunks, %d wide changes: the test covers too little", len(st.ints), len(st.wides))
	}
	ids := make([]int32, st.n())
	for i := range ids {
		ids[i] = int32(i)
	}
	prior := DefaultFactors().vector()
	sc := &fitScratch{}
	for _, minSupport := range []int{20, st.n() / 3} {
		for skip := noFold; ; {
			lay, n := fitLayoutOf(st, ids, skip, minSupport)
			if bits.OnesCount16(lay.freeMask) == 0 || n == 0 {
				t.Fatalf("support %d skip %d: nothing to fit", minSupport, skip)
			}
			robust := make([]float64, n)
			for k := range robust {
				robust[k] = 0.1 + rng.Float64()
			}
			ys := make([]float64, n)
			fixedTargets(st, ids, skip, &lay, &prior, ys)
			wantA, wantB := normalEquationsRef(&lay, st, ids, skip, robust, ys)
			var A [][]float64
			var b []float64
			for _, cache := range []bool{false, true} {
				saved := maxCached
				maxCached = 0 // too many to keep
				if cache {
					maxCached = math.MaxInt
				}
				lay.cacheChanges(st, ids, skip, n, sc)
				maxCached = saved
				if sc.cached != cache {
					t.Fatalf("support %d skip %d: cached %v, want %v", minSupport, skip, sc.cached, cache)
				}
				A, b = lay.normalEquations(st, ids, skip, robust, ys, sc)
				for a := range wantA {
					for c := range wantA[a] {
						if math.Float64bits(A[a][c]) != math.Float64bits(wantA[a][c]) {
							t.Fatalf("support %d skip %d cached %v: A[%d][%d] = %v, want %v", minSupport, skip, cache, a, c, A[a][c], wantA[a][c])
						}
					}
					if math.Float64bits(b[a]) != math.Float64bits(wantB[a]) {
						t.Fatalf("support %d skip %d cached %v: b[%d] = %v, want %v", minSupport, skip, cache, a, b[a], wantB[a])
					}
				}
			}
			next := nnls(A, b)
			for _, sol := range [][]float64{next, append([]float64{math.Inf(1)}, next[1:]...)} {
				got, want := append([]float64(nil), robust...), append([]float64(nil), robust...)
				gc := lay.reweight(st, ids, skip, prior, sol, got)
				wc := reweightRef(&lay, st, ids, skip, prior, sol, want)
				if gc != wc {
					t.Fatalf("support %d skip %d: changed %v, want %v", minSupport, skip, gc, wc)
				}
				for k := range want {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("support %d skip %d: weight %d = %v, want %v", minSupport, skip, k, got[k], want[k])
					}
				}
			}
			if skip++; skip == noFold+1 {
				skip = 0
			}
			if skip == folds {
				break
			}
		}
	}
}

// BenchmarkFoldSets is the fits of a ten-fold cross-validation alone (no
// sample reading, no errors) on the steps of noisy samples, one fit at a
// time.
func BenchmarkFoldSets(b *testing.B) {
	samples := noisy(5, 400)
	ff := NewFoldFit(FitOptions{}, nil)
	for i := range samples {
		ff.Add(&samples[i], i%10)
	}
	sc := &fitScratch{}
	b.ReportAllocs()
	cpu := testutil.CPUTime()
	for b.Loop() {
		for _, k := range append([]int{noFold}, ff.ids...) {
			if _, _, err := fitSet(&ff.st, ff.all, k, ff.gens, ff.opt, ff.models, sc); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(testutil.CPUTime()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
}

// TestFoldSetsPanicOnCaller: a panic in a fit worker reaches foldSets'
// caller (where a run turns it into an internal error) after the other
// workers stopped, instead of ending the process.
func TestFoldSetsPanicOnCaller(t *testing.T) {
	samples := noisy(7, 30)
	ff := NewFoldFit(FitOptions{}, nil)
	for i := range samples {
		ff.Add(&samples[i], i%10)
	}
	defer func() {
		if p, _ := recover().(string); !strings.HasPrefix(p, "boom\n") || !strings.Contains(p, "TestFoldSetsPanicOnCaller.func") {
			t.Fatalf("recovered %q, want boom and the worker's stack", p)
		}
	}()
	foldSets(&ff.st, ff.all, ff.gens, ff.opt, ff.models, ff.ids, func(*fitScratch) { panic("boom") })
	t.Fatal("foldSets returned")
}

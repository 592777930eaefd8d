package tokens

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStepSetMatchesDense: the sparse steps hold what the dense ones of
// the reference code hold (fit_ref_test.go), change for change, over
// several chunks of changes: int32 counts, fractions, values beyond int32,
// NaN and −0 (which the fits treat as no change).
func TestStepSetMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	samples := make([]Sample, 900)
	for f := range samples {
		s := &samples[f]
		var x features
		n := 2 + rng.IntN(200)
		for k := range n {
			for j := range x {
				switch rng.IntN(12) {
				case 0, 1, 2, 3, 4:
				case 5:
					if rng.IntN(60) == 0 {
						x[j] += 0.5
					}
				case 6:
					if rng.IntN(60) == 0 {
						x[j] += 5e9
					}
				case 7:
					if f == 0 && k == 3 {
						x[j] = math.NaN() // every later change of j is NaN
					}
				case 8:
					x[j] = math.Copysign(0, -1) // −0 after 0: a −0 change
				default:
					x[j] += float64(rng.IntN(70000) - 1000)
				}
			}
			s.Calls = append(s.Calls, SampleCall{X: x, Real: float64(rng.IntN(1e6)), Complete: rng.IntN(10) != 0, Anchor: rng.IntN(30) == 0})
		}
	}
	ref := refSteps(samples)
	st := steps(samples)
	if st.n() != len(ref) {
		t.Fatalf("%d steps, want %d", st.n(), len(ref))
	}
	if len(st.ints) < 3 || len(st.wides) == 0 {
		t.Fatalf("%d chunks, %d wide changes: the test covers too little", len(st.ints), len(st.wides))
	}
	for i := range ref {
		var x features
		dreal, nz := st.load(int32(i), &x)
		if math.Float64bits(dreal) != math.Float64bits(ref[i].dreal) || int(st.fold[i]) != ref[i].file {
			t.Fatalf("step %d: dreal %v file %d, want %v %d", i, dreal, st.fold[i], ref[i].dreal, ref[i].file)
		}
		for j, d := range ref[i].dx {
			want := d
			if d == 0 {
				want = 0 // −0 is no change
			}
			if same := math.Float64bits(x[j]) == math.Float64bits(want) || (math.IsNaN(x[j]) && math.IsNaN(want)); !same {
				t.Fatalf("step %d feature %d: %v, want %v", i, j, x[j], want)
			}
			if (nz&(1<<j) != 0) != (d != 0) {
				t.Fatalf("step %d feature %d: changed %v, want %v", i, j, nz&(1<<j) != 0, d != 0)
			}
		}
	}
}

// TestStepSetChunkFilledExactly: a step without changes after steps whose
// changes end exactly at a chunk's length is read back (it pointed past
// the last chunk, and reading it panicked).
func TestStepSetChunkFilledExactly(t *testing.T) {
	var st stepSet
	var dx features
	for j := range dx {
		dx[j] = 1
	}
	for range stepChunk / len(dx) {
		st.add(&dx, 1, 0)
	}
	var last features
	for j := range stepChunk % len(dx) {
		last[j] = 2
	}
	st.add(&last, 2, 0)
	st.add(&features{}, 3, 1)
	var x features
	for i := range st.n() {
		st.load(int32(i), &x)
	}
	if dreal, nz := st.load(int32(st.n()-1), &x); dreal != 3 || nz != 0 || x != (features{}) {
		t.Fatalf("the empty step reads dreal %v, mask %b, changes %v", dreal, nz, x)
	}
}

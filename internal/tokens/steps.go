package tokens

import (
	"math/bits"
	"slices"
)

// stepSet holds the steps of a fit, one step being the change between two
// consecutive complete calls of a segment, column by column and sparse: a
// run keeps up to 500,000 of them, and a step changes about 7 of the 11
// quantities. Per step it keeps the change of the real context (dreal),
// the fold of its sample (fold), the mask of the quantities that changed
// (nz: bit j for feature j) and where their changes start (at). The
// changes, in feature order, are byte and item counts, hence small
// integers, kept as int32 in chunks of ints; a step with a change that is
// not (a fraction, or out of range) is wide (wideBit in nz) and keeps its
// changes as float64 in wides instead. A step takes 18 bytes plus 4 per
// changed quantity (72 bytes in all before).
type stepSet struct {
	dreal []float64
	fold  []int32
	nz    []uint16
	at    []uint32
	ints  [][]int32
	wides []float64
}

// wideBit marks a step whose changes are in wides (nFeatures < 15).
const wideBit = 1 << 15

// stepChunk is the length of a chunk of ints: growing the set never
// copies the changes already kept.
const stepChunk = 1 << 16

// n is the number of steps.
func (s *stepSet) n() int { return len(s.dreal) }

// grow makes room for n more steps (the changes grow by chunks).
func (s *stepSet) grow(n int) {
	if n <= 0 {
		return
	}
	s.dreal = slices.Grow(s.dreal, n)
	s.fold = slices.Grow(s.fold, n)
	s.nz = slices.Grow(s.nz, n)
	s.at = slices.Grow(s.at, n)
}

// add appends a step of a sample of the given fold: dx are the changes,
// dreal the real context's.
func (s *stepSet) add(dx *features, dreal float64, fold int) {
	var nz uint16
	exact := true
	for i, d := range dx {
		if d != 0 {
			nz |= 1 << i
			// int32 keeps it exactly when it converts back to itself
			// (out of range or a fraction does not).
			exact = exact && float64(int32(d)) == d
		}
	}
	var at uint32
	if exact {
		cnt := bits.OnesCount16(nz)
		last := len(s.ints) - 1
		// A chunk is never full: a step without changes points just past
		// the last chunk's changes, which must be a place in that chunk.
		if last < 0 || len(s.ints[last])+cnt >= stepChunk {
			s.ints = append(s.ints, make([]int32, 0, stepChunk))
			last++
		}
		at = uint32(last)*stepChunk + uint32(len(s.ints[last]))
		for _, d := range dx {
			if d != 0 {
				s.ints[last] = append(s.ints[last], int32(d))
			}
		}
	} else {
		at = uint32(len(s.wides))
		for _, d := range dx {
			if d != 0 {
				s.wides = append(s.wides, d)
			}
		}
		nz |= wideBit
	}
	s.dreal = append(s.dreal, dreal)
	s.fold = append(s.fold, int32(fold))
	s.nz = append(s.nz, nz)
	s.at = append(s.at, at)
}

// changes puts the changes of step i's changed quantities in xs, in
// feature order (xs[k] is the change of the k-th bit of nz), and returns
// the change of the real context and the changed quantities' mask.
func (s *stepSet) changes(i int32, xs *features) (dreal float64, nz uint16) {
	m := s.nz[i]
	nz = m &^ wideBit
	n := bits.OnesCount16(nz)
	at := s.at[i]
	if m&wideBit != 0 {
		copy(xs[:n], s.wides[at:])
	} else {
		for k, v := range s.ints[at/stepChunk][at%stepChunk:][:n] {
			xs[k] = float64(v)
		}
	}
	return s.dreal[i], nz
}

// load puts the changes of step i in x (0 for the quantities that did not
// change) and returns the change of the real context and the changed
// quantities' mask.
func (s *stepSet) load(i int32, x *features) (dreal float64, nz uint16) {
	var xs features
	dreal, nz = s.changes(i, &xs)
	*x = features{}
	k := 0
	for m := nz; m != 0; m &= m - 1 {
		x[bits.TrailingZeros16(m)] = xs[k]
		k++
	}
	return dreal, nz
}

// appendSteps appends the steps of one sample, of fold f: the changes between
// consecutive complete calls of a segment, the later not an anchor.
func (s *stepSet) appendSteps(smp *Sample, f int) {
	cs := smp.Calls
	for k := 1; k < len(cs); k++ {
		a, b := &cs[k-1], &cs[k]
		if b.Anchor || a.Segment != b.Segment || !a.Complete || !b.Complete {
			continue
		}
		var dx features
		for i := range dx {
			dx[i] = b.X[i] - a.X[i]
		}
		s.add(&dx, b.Real-a.Real, f)
	}
}

package orderstat

import (
	"math"
	"slices"
)

// QuantileRanks are the order statistics (0-based) the p-quantile of n
// sorted values (n > 0) is computed from by QuantileAt.
func QuantileRanks(n int, p float64) []int {
	lo := int(math.Floor(p * float64(n-1)))
	if lo >= n-1 {
		return []int{n - 1}
	}
	return []int{lo, lo + 1}
}

// QuantileAt is the p-quantile (0 ≤ p ≤ 1) of n sorted values (n > 0),
// at(i) being the i-th, asked only for QuantileRanks(n, p): the linear
// interpolation between order statistics that numpy and R use by default
// ("type 7").
func QuantileAt(n int, p float64, at func(int) float64) float64 {
	h := p * float64(n-1)
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return at(n - 1)
	}
	a := at(lo)
	return a + (h-float64(lo))*(at(lo+1)-a)
}

// Quantiles is, for every stream s of the counts[s] values scan gives, its
// p-quantile (QuantileAt) for each p of ps, in ps' order; NaN for a stream
// without values. The order statistics are selected exactly (Select), so
// the quantiles are those of sorting each stream's values in memory.
func Quantiles(counts []int64, ps []float64, scan Scan) ([][]float64, error) {
	want := make([][]int, len(counts))
	for s, n := range counts {
		for _, p := range ps {
			if n > 0 {
				want[s] = append(want[s], QuantileRanks(int(n), p)...)
			}
		}
	}
	keys, err := Select(counts, want, scan)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(counts))
	for s, n := range counts {
		out[s] = make([]float64, len(ps))
		for i, p := range ps {
			if n == 0 {
				out[s][i] = math.NaN()
				continue
			}
			out[s][i] = QuantileAt(int(n), p, func(r int) float64 {
				return Value(keys[s][slices.Index(want[s], r)])
			})
		}
	}
	return out, nil
}

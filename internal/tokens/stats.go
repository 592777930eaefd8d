package tokens

import (
	"math"
	"sort"
)

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of xs by linear interpolation
// between order statistics (the "type 7" definition numpy and R use by
// default), or NaN for no data. xs is not modified.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return quantileSorted(s, p)
}

func quantileSorted(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// ErrStats are the median and 95th percentile of absolute relative errors.
type ErrStats struct {
	N      int     `json:"n"`
	Median float64 `json:"median_abs_err"`
	P95    float64 `json:"p95_abs_err"`
}

// AbsErrStats summarises errors by their absolute values.
func AbsErrStats(errs []float64) ErrStats {
	a := make([]float64, len(errs))
	for i, e := range errs {
		a[i] = math.Abs(e)
	}
	sort.Float64s(a)
	return ErrStats{N: len(a), Median: quantileSorted(a, 0.5), P95: quantileSorted(a, 0.95)}
}

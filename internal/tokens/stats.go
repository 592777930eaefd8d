package tokens

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/compactbench/compactbench/internal/orderstat"
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
	return orderstat.QuantileAt(len(s), p, func(i int) float64 { return s[i] })
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

// errStatsJSON is ErrStats on the wire: no data gives null, not NaN (which
// JSON cannot carry).
type errStatsJSON struct {
	N      int      `json:"n"`
	Median *float64 `json:"median_abs_err"`
	P95    *float64 `json:"p95_abs_err"`
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// MarshalJSON writes null for statistics of no data.
func (s ErrStats) MarshalJSON() ([]byte, error) {
	return json.Marshal(errStatsJSON{N: s.N, Median: finite(s.Median), P95: finite(s.P95)})
}

// UnmarshalJSON reads null statistics as NaN.
func (s *ErrStats) UnmarshalJSON(data []byte) error {
	var w errStatsJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	s.N, s.Median, s.P95 = w.N, math.NaN(), math.NaN()
	if w.Median != nil {
		s.Median = *w.Median
	}
	if w.P95 != nil {
		s.P95 = *w.P95
	}
	return nil
}

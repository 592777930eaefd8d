package orderstat

import "math"

// Key maps a float64 to a key whose unsigned order is a total order
// that agrees with sort.Float64s: every NaN first (as one key, whatever its
// bits), then the values by size, −0 just before +0. sort.Float64s leaves
// −0 and +0 in no particular order; a quantile interpolated between two
// values does not depend on which zero comes first (it adds the lower
// value to a non-negative multiple of their difference), and the one value
// returned as it is (the largest, p = 1, or a single value) is then +0
// only where sort.Float64s may return either.
func Key(v float64) uint64 {
	if math.IsNaN(v) {
		return 0
	}
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b // negative: larger magnitude, smaller key; below every positive key
	}
	return b | 1<<63
}

// Value is the value of a Key (a NaN for 0).
func Value(k uint64) float64 {
	if k == 0 {
		return math.NaN()
	}
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

package orderstat

import (
	"math"
	"testing"
)

// edgeFloats are the values the order key must place as sort.Float64s does.
var edgeFloats = []float64{
	math.NaN(), math.Float64frombits(0xfff8000000000001), // a negative NaN
	math.Inf(-1), -math.MaxFloat64, -1e300, -1.5, -1, -math.SmallestNonzeroFloat64 * 3,
	-math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0, math.SmallestNonzeroFloat64,
	math.SmallestNonzeroFloat64 * 7, 0x1p-1022, 0.25, 0.5, 1, 1.5, 1e300, math.MaxFloat64, math.Inf(1),
}

// TestKey: the keys' unsigned order is sort.Float64s' order (NaN
// first, −0 before +0), and a key gives back the value's bits.
func TestKey(t *testing.T) {
	for i, a := range edgeFloats {
		k := Key(a)
		back := Value(k)
		if math.IsNaN(a) {
			if k != 0 || !math.IsNaN(back) {
				t.Errorf("NaN %#x: key %#x, back %v", math.Float64bits(a), k, back)
			}
			continue
		}
		if math.Float64bits(back) != math.Float64bits(a) {
			t.Errorf("%v: back %v", a, back)
		}
		for _, b := range edgeFloats[i+1:] {
			kb := Key(b)
			switch {
			case math.IsNaN(b):
				if kb > k {
					t.Errorf("NaN after %v", a)
				}
			case a < b || a == 0 && b == 0 && math.Signbit(a) && !math.Signbit(b):
				if k >= kb {
					t.Errorf("%v (key %#x) not below %v (key %#x)", a, k, b, kb)
				}
			}
		}
	}
}

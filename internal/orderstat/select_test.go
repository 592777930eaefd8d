package orderstat

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestSelectRanks: the keys selectRanks puts at the asked ranks are those
// sorting puts there, on sizes around the insertion cut-off, with many
// equal keys, sorted and reversed input, and repeated or adjacent ranks.
func TestSelectRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := []struct {
		name string
		gen  func(i, n int) uint64
	}{
		{"random", func(int, int) uint64 { return rng.Uint64() }},
		{"few values", func(int, int) uint64 { return rng.Uint64N(3) }},
		{"sorted", func(i, _ int) uint64 { return uint64(i) }},
		{"reversed", func(i, n int) uint64 { return uint64(n - i) }},
		{"equal", func(int, int) uint64 { return 7 }},
		{"organ pipe", func(i, n int) uint64 { return uint64(min(i, n-i)) }},
	}
	for _, sh := range shapes {
		for _, n := range []int{1, 2, 15, 16, 17, 33, 100, 1000, 4096} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = sh.gen(i, n)
			}
			want := slices.Sorted(slices.Values(keys))
			for _, ranks := range [][]int64{{0}, {int64(n - 1)}, {int64(n / 2), int64(n / 2)}, {int64(n / 2), int64(min(n/2+1, n-1)), int64(n * 95 / 100), int64(min(n*95/100+1, n-1))}} {
				got := slices.Clone(keys)
				selectRanks(got, slices.Clone(ranks))
				for _, r := range ranks {
					if got[r] != want[r] {
						t.Fatalf("%s n=%d ranks %v: key at %d is %d, sorted %d", sh.name, n, ranks, r, got[r], want[r])
					}
				}
				if slices.Sort(got); !slices.Equal(got, want) {
					t.Fatalf("%s n=%d: keys lost or changed", sh.name, n)
				}
			}
		}
	}
}

// TestSelectNaN: NaN sorts first, as sort.Float64s puts it, and a stream
// shorter than its count is an error.
func TestSelectNaN(t *testing.T) {
	vals := []float64{0.3, math.NaN(), 0, 0.1, math.Inf(1), 0.1, math.NaN()}
	keys := make([]uint64, len(vals))
	for i, v := range vals {
		keys[i] = Key(v)
	}
	want := [][]int{{0, 1, 2, 3, 4, 5, 6}}
	for _, limit := range []int64{1, 4096} {
		collectLimit = limit
		got, err := Select([]int64{int64(len(vals))}, want, func(visit func(int, uint64)) error {
			for _, k := range keys {
				visit(0, k)
			}
			return nil
		})
		collectLimit = 4096
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Clone(vals)
		sort.Float64s(sorted)
		for i, k := range got[0] {
			if v := Value(k); math.Float64bits(v) != math.Float64bits(sorted[i]) && !(math.IsNaN(v) && math.IsNaN(sorted[i])) {
				t.Errorf("limit %d: rank %d = %v, want %v", limit, i, v, sorted[i])
			}
		}
	}
	// A stream shorter than its counts says is an error, not a wrong figure.
	if _, err := Select([]int64{3}, [][]int{{1}}, func(visit func(int, uint64)) error {
		visit(0, 5)
		return nil
	}); err == nil {
		t.Error("a short stream was not reported")
	}
}

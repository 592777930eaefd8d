package aggregate

import (
	"math/rand/v2"
	"slices"
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

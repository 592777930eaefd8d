package orderstat

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/compactbench/compactbench/internal/tempfile"
)

// TestQuantilesMatchSort: order statistics and quantiles selected from
// streams logged in a tempfile.Log are those sort.Float64s gives over each
// stream in memory, bit for bit (a zero's sign aside, which sort.Float64s
// leaves open), on random values with NaNs, ±0, ±Inf, subnormals and many
// duplicates, whether the log stays in memory, spills past a few records or
// spills every record, and whatever the size of the buckets the selection
// gathers (1 and 3 keys: radix narrowing down to whole keys; 4096: a
// stream of 5,000 values is narrowed once).
func TestQuantilesMatchSort(t *testing.T) {
	defer func(c int64) { collectLimit = c }(collectLimit)
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, -1, 1}
	value := func(pool []float64) float64 {
		switch rng.IntN(4) {
		case 0:
			return special[rng.IntN(len(special))]
		case 1:
			return pool[rng.IntN(len(pool))] // a duplicate
		default:
			return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		}
	}
	pool := []float64{0.5, 0.25, 1e-300, -7}
	sizes := []int{0, 1, 2, 17, 300, 5000}
	streams := make([][]float64, len(sizes))
	counts := make([]int64, len(sizes))
	for s, n := range sizes {
		for range n {
			streams[s] = append(streams[s], value(pool))
		}
		counts[s] = int64(n)
	}
	streams = append(streams, slices.Repeat([]float64{0.1}, 5000)) // one key, all equal
	counts = append(counts, 5000)
	ps := []float64{0, 0.25, 0.5, 0.95, 1}
	for _, mem := range []int{1 << 20, 12 * 50, 1} {
		for _, limit := range []int64{1, 3, 4096} {
			t.Run(fmt.Sprintf("mem=%d/collect=%d", mem, limit), func(t *testing.T) {
				t.Setenv("TMPDIR", t.TempDir())
				collectLimit = limit
				var log tempfile.Log
				defer log.Close()
				for i := 0; ; i++ { // the streams interleaved
					more := false
					for s, vs := range streams {
						if i < len(vs) {
							log.Buf = binary.LittleEndian.AppendUint32(log.Buf, uint32(s))
							log.Buf = binary.LittleEndian.AppendUint64(log.Buf, Key(vs[i]))
							log.Flush(mem)
							more = true
						}
					}
					if !more {
						break
					}
				}
				if (log.InFile() > 0) != (mem < 1<<20) {
					t.Fatalf("%d bytes in the file", log.InFile())
				}
				scan := func(visit func(int, uint64)) error {
					return log.Each(12, func(rec []byte) {
						visit(int(binary.LittleEndian.Uint32(rec)), binary.LittleEndian.Uint64(rec[4:]))
					})
				}
				want := make([][]int, len(streams))
				for s, vs := range streams {
					for _, r := range []int{0, len(vs) / 2, len(vs) - 1, len(vs) / 2, len(vs) * 95 / 100} {
						if r >= 0 && r < len(vs) {
							want[s] = append(want[s], r)
						}
					}
				}
				keys, err := Select(counts, want, scan)
				if err != nil {
					t.Fatal(err)
				}
				q, err := Quantiles(counts, ps, scan)
				if err != nil {
					t.Fatal(err)
				}
				for s, vs := range streams {
					sorted := slices.Clone(vs)
					sort.Float64s(sorted)
					for k, r := range want[s] {
						if got := Value(keys[s][k]); !sameValue(got, sorted[r]) {
							t.Errorf("stream %d (%d values): rank %d is %v, sorted %v", s, len(vs), r, got, sorted[r])
						}
					}
					for i, p := range ps {
						exp := math.NaN()
						if len(sorted) > 0 {
							exp = QuantileAt(len(sorted), p, func(r int) float64 { return sorted[r] })
						}
						if !sameValue(q[s][i], exp) {
							t.Errorf("stream %d (%d values): p=%v quantile %v (%#x), sorted %v (%#x)", s, len(vs), p, q[s][i], math.Float64bits(q[s][i]), exp, math.Float64bits(exp))
						}
					}
				}
			})
		}
	}
}

// sameValue: the same bits, both NaN, or both zero.
func sameValue(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b) || a == 0 && b == 0
}

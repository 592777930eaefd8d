package figures

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/tokens"
)

// quantilesOf runs values through a sample log holding mem records in
// memory and returns its p-quantile.
func quantilesOf(t testing.TB, values []float64, mem int, p float64) float64 {
	t.Helper()
	old := sampleMem
	sampleMem = mem
	defer func() { sampleMem = old }()
	var l sampleLog
	other := must(MedianCompression) + 1 // a second figure interleaved, which must not mix in
	for _, v := range values {
		l.add(must(MedianCompression), v)
		l.add(other, -v)
	}
	q, err := l.quantiles(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	if err := l.each(must(MedianCompression), func(v float64) { got = append(got, v) }); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(values)
	sort.Float64s(want)
	sort.Float64s(got)
	if len(got) != len(want) {
		t.Fatalf("each: %d values, want %d", len(got), len(want))
	}
	for i := range got {
		if !sameBits(got[i], want[i]) && !(got[i] == 0 && want[i] == 0) {
			t.Fatalf("each: value %d is %v, want %v", i, got[i], want[i])
		}
	}
	return q[must(MedianCompression)]
}

// sameBits: identical bits, or both NaN.
func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestSpilledQuantiles: the quantiles selected from the values on disk are
// tokens.Quantile's over the values in memory, bit for bit, whatever the
// memory bound (1: every value its own run), for edge values.
func TestSpilledQuantiles(t *testing.T) {
	neg0 := math.Copysign(0, -1)
	cases := []struct {
		name   string
		values []float64
	}{
		{"none", nil},
		{"one", []float64{0.5}},
		{"negative zero alone", []float64{neg0}},
		{"zeros of both signs", []float64{neg0, 0, neg0, 0, 0, neg0}},
		{"zeros and a value", []float64{0, neg0, 1, neg0}},
		{"negatives and zeros", []float64{-2, neg0, -1, 0}},
		{"NaN first", []float64{math.NaN(), 1, 2, 3, 4}},
		{"mostly NaN", []float64{math.NaN(), math.NaN(), math.NaN(), 1}},
		{"infinities", []float64{math.Inf(-1), math.Inf(1), 0, 1}},
		{"infinite median", []float64{math.Inf(1), math.Inf(1), 1}},
		{"subnormals", []float64{math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 3 * math.SmallestNonzeroFloat64, neg0}},
		{"extremes", []float64{math.Inf(-1), -math.MaxFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, math.Inf(1), 0x1p-1022}},
		{"reversed", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1}},
	}
	for _, c := range cases {
		for _, p := range []float64{0.5, 0.95, 0.25} {
			want := tokens.Quantile(c.values, p)
			for _, mem := range []int{1, 2, 3, 5, 4096} {
				if got := quantilesOf(t, c.values, mem, p); !sameBits(got, want) {
					t.Errorf("%s, p=%v, %d in memory: %v (%#x), want %v (%#x)", c.name, p, mem, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
	}
}

// FuzzSpilledQuantiles holds the spilled median and p95 to tokens.Quantile
// over any float64 values (every bit pattern: NaNs, ±0, ±Inf, subnormals).
func FuzzSpilledQuantiles(f *testing.F) {
	seed := func(vs ...float64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(uint8(1), seed(0, math.Copysign(0, -1), 1))
	f.Add(uint8(2), seed(math.Inf(-1), -math.MaxFloat64, -1.5, math.Copysign(0, -1), 0, 0x1p-1022, math.MaxFloat64, math.Inf(1)))
	f.Add(uint8(3), seed(math.NaN(), -1, math.Inf(1), 5e-324))
	f.Fuzz(func(t *testing.T, mem uint8, data []byte) {
		var values []float64
		for ; len(data) >= 8; data = data[8:] {
			values = append(values, math.Float64frombits(binary.LittleEndian.Uint64(data)))
		}
		for _, p := range []float64{0.5, 0.95} {
			want := tokens.Quantile(values, p)
			if got := quantilesOf(t, values, int(mem%8)+1, p); !sameBits(got, want) {
				t.Fatalf("p=%v of %v: %v, want %v", p, values, got, want)
			}
		}
	})
}

// TestSetSpilled: a set whose medians went to disk writes the same JSON as
// one that kept them in memory.
func TestSetSpilled(t *testing.T) {
	fill := func(mem int) []byte {
		old := sampleMem
		sampleMem = mem
		defer func() { sampleMem = old }()
		var s Set
		for i := range 1000 {
			s.AddRun(&analysis.RunRow{Compactions: 1, CostUSD: float64(i%7) / 10, BaselineCostUSD: 1})
			s.AddEvent(&analysis.EventRow{CompressionRatio: math.Sin(float64(i)), NeedFacts: 3, NeedKept: int64(i % 4)})
		}
		s.Finish()
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(&s)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	mem, spilled := fill(1<<20), fill(7)
	if string(mem) != string(spilled) {
		t.Errorf("spilled:\n%s\nin memory:\n%s", spilled, mem)
	}
}

// TestSetMemoryBounded: a million event values leave the live heap within
// a few hundred kilobytes of an empty set (in memory they took 16 MB).
func TestSetMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("adds a million values")
	}
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var s Set
	s.AddEvent(&analysis.EventRow{CompressionRatio: 0.5})
	before := live()
	e := analysis.EventRow{NeedFacts: 2}
	for i := range 1_000_000 {
		e.CompressionRatio = float64(i%1000) / 1000
		e.NeedKept = int64(i % 3)
		s.AddEvent(&e)
	}
	grew := int64(live()) - int64(before)
	runtime.KeepAlive(&s)
	if grew > 2<<20 {
		t.Errorf("the live heap grew by %d bytes for a million event values", grew)
	}
	s.Finish()
	if v := s.Value(MedianCompression); v == nil || *v != 0.5 {
		t.Errorf("median compression %v", v)
	}
}

package figures

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/compactbench/compactbench/internal/tempfile"
)

// sampleMem is how many values a Set keeps in memory before it sorts them
// and writes them as one run to its temporary file (a variable for tests).
var sampleMem = 4096

// sampleRec is one value of a Median figure: the figure's registry index
// and the value's OrderKey.
type sampleRec struct {
	key uint64
	fig uint16
}

// recBytes is the size of a record in the file: the figure, then the key,
// little-endian.
const recBytes = 10

func compareRec(a, b sampleRec) int {
	if c := cmp.Compare(a.fig, b.fig); c != 0 {
		return c
	}
	return cmp.Compare(a.key, b.key)
}

// sampleRun is a sorted run of records in the file: its first byte and its
// number of records.
type sampleRun struct {
	off int64
	n   int64
}

// sampleLog holds the values of a Set's Median figures in memory bounded
// whatever their number: at most sampleMem records in memory, the rest in
// sorted runs in a temporary file (removed from its directory as soon as
// it is created, where the system allows; the file closes when the Set is
// collected). The median is then read by merging the runs, so the figures
// are those of sorting every value in memory. If the file cannot be
// created or written, the values stay in memory: correct, only not
// bounded.
type sampleLog struct {
	buf    []sampleRec
	counts []int64 // values per figure
	f      *os.File
	size   int64 // bytes in f
	runs   []sampleRun
	mem    bool // the file failed: keep everything in buf
	err    error
}

// OrderKey maps a float64 to a key whose unsigned order is a total order
// that agrees with sort.Float64s: every NaN first (as one key, whatever its
// bits), then the values by size, −0 just before +0. sort.Float64s leaves
// −0 and +0 in no particular order; a quantile interpolated between two
// values does not depend on which zero comes first (it adds the lower
// value to a non-negative multiple of their difference), and the one value
// returned as it is (the largest, p = 1, or a single value) is then +0
// only where sort.Float64s may return either.
func OrderKey(v float64) uint64 {
	if math.IsNaN(v) {
		return 0
	}
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b // negative: larger magnitude, smaller key; below every positive key
	}
	return b | 1<<63
}

// OrderValue is the value of an OrderKey (a NaN for 0).
func OrderValue(k uint64) float64 {
	if k == 0 {
		return math.NaN()
	}
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// add records a value of figure fig.
func (l *sampleLog) add(fig int, v float64) {
	if l.counts == nil {
		l.counts = make([]int64, len(registry))
	}
	l.counts[fig]++
	l.buf = append(l.buf, sampleRec{key: OrderKey(v), fig: uint16(fig)})
	if len(l.buf) >= sampleMem && !l.mem {
		l.spill()
	}
}

// spill sorts buf and writes it as a run at the end of the file.
func (l *sampleLog) spill() {
	if l.f == nil {
		f, err := tempfile.Unlinked("compactbench-samples")
		if err != nil {
			l.mem = true
			return
		}
		l.f = f
	}
	slices.SortFunc(l.buf, compareRec)
	b := make([]byte, 0, len(l.buf)*recBytes)
	for _, r := range l.buf {
		b = binary.LittleEndian.AppendUint16(b, r.fig)
		b = binary.LittleEndian.AppendUint64(b, r.key)
	}
	if _, err := l.f.WriteAt(b, l.size); err != nil {
		l.mem = true // what WriteAt wrote past size is never read
		return
	}
	l.runs = append(l.runs, sampleRun{off: l.size, n: int64(len(l.buf))})
	l.size += int64(len(b))
	l.buf = l.buf[:0]
}

// count is the number of values of figure fig.
func (l *sampleLog) count(fig int) int64 {
	if l.counts == nil {
		return 0
	}
	return l.counts[fig]
}

// runReader reads one sorted source: a run of the file, or the records in
// memory (sorted first).
type runReader struct {
	r    *bufio.Reader
	mem  []sampleRec
	left int64
	head sampleRec
}

// next moves to the source's next record; false at its end.
func (r *runReader) next() (bool, error) {
	if r.left == 0 {
		return false, nil
	}
	r.left--
	if r.r == nil {
		r.head, r.mem = r.mem[0], r.mem[1:]
		return true, nil
	}
	var b [recBytes]byte
	if _, err := io.ReadFull(r.r, b[:]); err != nil {
		return false, fmt.Errorf("reading the median values back: %w", err)
	}
	r.head = sampleRec{fig: binary.LittleEndian.Uint16(b[:2]), key: binary.LittleEndian.Uint64(b[2:])}
	return true, nil
}

// runHeap orders the sources by their head record.
type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return compareRec(h[i].head, h[j].head) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge calls visit with every record, in (figure, key) order: the runs
// of the file and the records in memory merged.
func (l *sampleLog) merge(visit func(r sampleRec)) error {
	slices.SortFunc(l.buf, compareRec)
	srcs := []*runReader{{mem: l.buf, left: int64(len(l.buf))}}
	for _, run := range l.runs {
		srcs = append(srcs, &runReader{r: bufio.NewReaderSize(io.NewSectionReader(l.f, run.off, run.n*recBytes), 4096), left: run.n})
	}
	h := make(runHeap, 0, len(srcs))
	for _, s := range srcs {
		ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, s)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		s := h[0]
		visit(s.head)
		ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// quantiles computes the p-quantile of every figure with values, as
// tokens.Quantile does over the values in memory (linear interpolation
// between order statistics, "type 7"): out[fig] is NaN for a figure
// without values.
func (l *sampleLog) quantiles(p float64) ([]float64, error) {
	out := make([]float64, len(registry))
	lo := make([]int64, len(registry))
	for i := range out {
		out[i] = math.NaN()
		if n := l.count(i); n > 0 {
			lo[i] = int64(math.Floor(p * float64(n-1)))
		}
	}
	a := make([]float64, len(registry))
	pos := make([]int64, len(registry))
	err := l.merge(func(r sampleRec) {
		i := int(r.fig)
		k := pos[i]
		pos[i]++
		n := l.counts[i]
		switch {
		case lo[i] >= n-1 && k == n-1:
			out[i] = OrderValue(r.key)
		case k == lo[i]:
			a[i] = OrderValue(r.key)
		case k == lo[i]+1:
			h := p * float64(n-1)
			out[i] = a[i] + (h-float64(lo[i]))*(OrderValue(r.key)-a[i])
		}
	})
	return out, err
}

// each calls fn with every value of figure fig, in no particular order; an
// error reading them back is also kept as the log's error.
func (l *sampleLog) each(fig int, fn func(v float64)) error {
	err := l.scan(fig, fn)
	if err != nil && l.err == nil {
		l.err = err
	}
	return err
}

func (l *sampleLog) scan(fig int, fn func(v float64)) error {
	for _, r := range l.buf {
		if int(r.fig) == fig {
			fn(OrderValue(r.key))
		}
	}
	if l.f == nil {
		return nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, l.size), 64<<10)
	var b [recBytes]byte
	for range l.size / recBytes {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return fmt.Errorf("reading the median values back: %w", err)
		}
		if int(binary.LittleEndian.Uint16(b[:2])) == fig {
			fn(OrderValue(binary.LittleEndian.Uint64(b[2:])))
		}
	}
	return nil
}

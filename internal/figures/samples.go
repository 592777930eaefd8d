package figures

import (
	"encoding/binary"
	"fmt"

	"github.com/compactbench/compactbench/internal/orderstat"
	"github.com/compactbench/compactbench/internal/tempfile"
)

// sampleMem is how many values a Set keeps in memory before it moves them
// to its temporary file (a variable for tests).
var sampleMem = 4096

// recBytes is the size of a logged value: its figure's registry index
// (uint16), then its orderstat.Key (uint64), little-endian.
const recBytes = 10

// sampleLog holds the values of a Set's Median figures in memory bounded
// whatever their number: at most sampleMem values in memory, the rest in a
// temporary file (tempfile.Log; it closes when the Set is collected). The
// medians are selected from it exactly (orderstat.Quantiles), so they are
// those of sorting every value in memory.
type sampleLog struct {
	log    tempfile.Log
	counts []int64 // values per figure
	err    error
}

// add records a value of figure fig.
func (l *sampleLog) add(fig int, v float64) {
	if l.counts == nil {
		l.counts = make([]int64, len(registry))
	}
	l.counts[fig]++
	l.log.Buf = binary.LittleEndian.AppendUint16(l.log.Buf, uint16(fig))
	l.log.Buf = binary.LittleEndian.AppendUint64(l.log.Buf, orderstat.Key(v))
	l.log.Flush(sampleMem * recBytes)
}

// scan reads the values back, giving visit each one's figure and key.
func (l *sampleLog) scan(visit func(fig int, key uint64)) error {
	err := l.log.Each(recBytes, func(b []byte) {
		visit(int(binary.LittleEndian.Uint16(b)), binary.LittleEndian.Uint64(b[2:]))
	})
	if err != nil {
		return fmt.Errorf("reading the median values back: %w", err)
	}
	return nil
}

// quantiles computes the p-quantile of every figure, as tokens.Quantile
// does over the values in memory: out[fig] is NaN for a figure without
// values.
func (l *sampleLog) quantiles(p float64) ([]float64, error) {
	counts := l.counts
	if counts == nil {
		counts = make([]int64, len(registry))
	}
	q, err := orderstat.Quantiles(counts, []float64{p}, l.scan)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(registry))
	for i := range out {
		out[i] = q[i][0]
	}
	return out, nil
}

// each calls fn with every value of figure fig, in no particular order; an
// error reading them back is also kept as the log's error.
func (l *sampleLog) each(fig int, fn func(v float64)) error {
	err := l.scan(func(f int, key uint64) {
		if f == fig {
			fn(orderstat.Value(key))
		}
	})
	if err != nil && l.err == nil {
		l.err = err
	}
	return err
}

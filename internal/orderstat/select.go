// Package orderstat selects exact order statistics (medians, p95s) of
// streams of float64 values too large to hold, in memory bounded by the
// number of statistics asked for: the values are read again as often as
// the selection needs (from a tempfile.Log), as keys whose unsigned order
// is sort.Float64s' order.
package orderstat

import (
	"fmt"
	"math/bits"
	"slices"
)

// Scan calls visit once per value of every stream, with the value's stream
// and Key, in any order but the same each time it is called; an error
// reading the values back ends it.
type Scan func(visit func(stream int, key uint64)) error

// collectLimit is the most keys Select gathers for one bucket; larger
// buckets are split by one more digit first (a variable for tests).
var collectLimit int64 = 4096

// Select finds order statistics of many streams of keys exactly, in
// memory bounded by the number of statistics asked for, whatever the
// streams' lengths: want[s] lists the ranks (0-based, in the stream's
// ascending order) of stream s, whose length is counts[s], and scan gives
// every key of every stream. The result has the keys at those ranks, in
// want's order.
//
// It is a radix selection: each scan counts, for every rank not yet
// found, the keys of its current bucket by their next digit (12 bits
// first, then 8), which narrows the bucket to the digit holding the rank;
// a bucket of at most collectLimit keys is gathered and its ranks selected,
// and one narrowed to all 64 bits is the key itself. A few scans suffice.
func Select(counts []int64, want [][]int, scan Scan) ([][]uint64, error) {
	all, err := orderTargets(counts, want)
	if err != nil {
		return nil, err
	}
	for {
		probes, byStream := planOrderProbes(all, len(counts))
		if len(probes) == 0 {
			break
		}
		if err := scanOrderProbes(scan, byStream); err != nil {
			return nil, err
		}
		for _, p := range probes {
			if err := p.resolve(); err != nil {
				return nil, err
			}
		}
	}
	return orderKeys(all, want), nil
}

// orderTarget is one rank Select looks for: the bucket of its stream
// that holds it so far (a prefix of plen bits) and its rank there.
type orderTarget struct {
	stream int
	r      int64 // rank within the bucket
	count  int64 // keys of the stream in the bucket
	prefix uint64
	plen   int // bits of prefix fixed
	done   bool
	key    uint64
}

// orderProbe is what one scan records for one bucket of one stream: a
// histogram of the keys' next digit, or the keys themselves when the
// bucket is small enough to gather.
type orderProbe struct {
	prefix  uint64
	plen    int
	collect bool
	hist    []int64
	keys    []uint64
	targets []*orderTarget
}

// orderProbeKey names a bucket of a stream, so that targets in the same
// bucket share one probe.
type orderProbeKey struct {
	stream int
	prefix uint64
	plen   int
}

// orderDigit is the width in bits of the digit counted after plen bits are
// fixed: 12 for the first, then 8 (fewer when fewer bits are left).
func orderDigit(plen int) int {
	if plen == 0 {
		return 12
	}
	return min(8, 64-plen)
}

// orderTargets checks want's ranks against counts and makes one target per
// rank, in want's order, each starting from the whole stream.
func orderTargets(counts []int64, want [][]int) ([]*orderTarget, error) {
	var all []*orderTarget
	for s, ranks := range want {
		for _, r := range ranks {
			if r < 0 || int64(r) >= counts[s] {
				return nil, fmt.Errorf("rank %d of a stream of %d", r, counts[s])
			}
			all = append(all, &orderTarget{stream: s, r: int64(r), count: counts[s]})
		}
	}
	return all, nil
}

// planOrderProbes makes one probe per bucket that some unfound target is
// in, and lists each stream's probes; no probes means every target is found.
func planOrderProbes(all []*orderTarget, streams int) (map[orderProbeKey]*orderProbe, [][]*orderProbe) {
	byStream := make([][]*orderProbe, streams)
	probes := map[orderProbeKey]*orderProbe{}
	for _, t := range all {
		if t.done {
			continue
		}
		k := orderProbeKey{t.stream, t.prefix, t.plen}
		p := probes[k]
		if p == nil {
			p = &orderProbe{prefix: t.prefix, plen: t.plen, collect: t.count <= collectLimit}
			if p.collect {
				p.keys = make([]uint64, 0, t.count)
			} else {
				p.hist = make([]int64, 1<<orderDigit(t.plen))
			}
			probes[k] = p
			byStream[t.stream] = append(byStream[t.stream], p)
		}
		p.targets = append(p.targets, t)
	}
	return probes, byStream
}

// scanOrderProbes runs one scan, giving each key to the probes of its
// stream whose bucket holds it: gathered, or counted by its next digit.
func scanOrderProbes(scan Scan, byStream [][]*orderProbe) error {
	return scan(func(s int, key uint64) {
		for _, p := range byStream[s] {
			if p.plen > 0 && key>>(64-p.plen) != p.prefix>>(64-p.plen) {
				continue
			}
			if p.collect {
				p.keys = append(p.keys, key)
			} else {
				p.hist[(key<<p.plen)>>(64-orderDigit(p.plen))]++
			}
		}
	})
}

// resolve moves each of the probe's targets on after a scan: a gathered
// bucket gives the key at the rank; a counted one narrows the target to
// the digit holding its rank, which is the key once all 64 bits are fixed.
func (p *orderProbe) resolve() error {
	if p.collect {
		var buf [4]int64 // a median and a p95: two ranks each
		ranks := buf[:0]
		for _, t := range p.targets {
			if t.r < int64(len(p.keys)) {
				ranks = append(ranks, t.r)
			}
		}
		selectRanks(p.keys, ranks)
	}
	for _, t := range p.targets {
		if p.collect {
			if int64(len(p.keys)) != t.count {
				return fmt.Errorf("a bucket of %d keys held %d on reading", t.count, len(p.keys))
			}
			t.key, t.done = p.keys[t.r], true
			continue
		}
		if err := p.narrow(t); err != nil {
			return err
		}
	}
	return nil
}

// selectRanks reorders keys so that keys[r] is the key of rank r (the
// r-th smallest, from 0) for every r of ranks (each below len(keys)), as
// sorting them would, without sorting the rest: a bucket's median and p95
// need two ranks each.
func selectRanks(keys []uint64, ranks []int64) {
	slices.Sort(ranks)
	lo := 0
	for _, r := range ranks {
		if int(r) < lo {
			continue // a repeated rank, in place already
		}
		nthKey(keys[lo:], int(r)-lo)
		lo = int(r) + 1
	}
}

// nthKey reorders a so that a[k] is the key a sorted copy holds there,
// with no larger key before it and no smaller one after it (introselect:
// quickselect around a median of three, sorting a range that partitions
// badly too often).
func nthKey(a []uint64, k int) {
	for budget := 2 * bits.Len(uint(len(a))); ; budget-- {
		if len(a) <= 16 || budget == 0 {
			slices.Sort(a)
			return
		}
		// median of three at the middle, as pivot
		m := len(a) / 2
		if a[m] < a[0] {
			a[m], a[0] = a[0], a[m]
		}
		if a[len(a)-1] < a[m] {
			a[len(a)-1], a[m] = a[m], a[len(a)-1]
			if a[m] < a[0] {
				a[m], a[0] = a[0], a[m]
			}
		}
		pivot := a[m]
		// three-way partition: < pivot, == pivot, > pivot
		lt, i, gt := 0, 0, len(a)
		for i < gt {
			switch {
			case a[i] < pivot:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case a[i] > pivot:
				gt--
				a[gt], a[i] = a[i], a[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			a = a[:lt]
		case k >= gt:
			a, k = a[gt:], k-gt
		default:
			return // a[k] == pivot, in place
		}
	}
}

// narrow fixes the next digit of t's bucket from the probe's histogram:
// the digit whose keys hold rank t.r, with the rank made relative to it.
func (p *orderProbe) narrow(t *orderTarget) error {
	var total int64
	for _, c := range p.hist {
		total += c
	}
	if total != t.count {
		return fmt.Errorf("a bucket of %d keys held %d on reading", t.count, total)
	}
	d := orderDigit(p.plen)
	var cum int64
	found := false
	for b, c := range p.hist {
		if t.r < cum+c {
			t.prefix |= uint64(b) << (64 - p.plen - d)
			t.plen += d
			t.r -= cum
			t.count = c
			found = true
			break
		}
		cum += c
	}
	if !found {
		return fmt.Errorf("rank %d past a bucket of %d keys", t.r, total)
	}
	if t.plen == 64 {
		t.key, t.done = t.prefix, true
	}
	return nil
}

// orderKeys lays the targets' keys out in want's shape.
func orderKeys(all []*orderTarget, want [][]int) [][]uint64 {
	out := make([][]uint64, len(want))
	i := 0
	for s, ranks := range want {
		out[s] = make([]uint64, len(ranks))
		for k := range ranks {
			out[s][k] = all[i].key
			i++
		}
	}
	return out
}

package anchors

import (
	"math/bits"
	"strings"
)

// foldSet finds any of up to 64 lower-case ASCII needles in a text, ignoring
// the case of ASCII letters, in one pass over the text and without making a
// lower-cased copy of it. Each needle is anchored on its least frequent byte
// (by a rough frequency order of English and code), so few positions of the
// text need a closer look.
type foldSet struct {
	needles []string
	// off[k] is the position of needle k's anchor byte.
	off []int
	// at[c] has bit k set when needle k's anchor byte is c, in either case
	// (in that case only when exact).
	at [256]uint64
	// exact: the needles are searched as they are, case included.
	exact bool
}

// byteOrder lists bytes from most to least frequent in text and code; bytes
// not listed count as rarest.
const byteOrder = " etaoinsrhldcumfpgwybvkxjqz\n.,_-/:\"'()=0123456789;{}[]<>*#"

func newFoldSet(needles []string) *foldSet { return newByteSet(needles, false) }

// newExactSet is a foldSet that finds the needles (non-empty, up to 64,
// any bytes) with their case: one pass over a text instead of one search
// per needle, for many needles in short texts.
func newExactSet(needles []string) *foldSet { return newByteSet(needles, true) }

func newByteSet(needles []string, exact bool) *foldSet {
	f := &foldSet{needles: needles, off: make([]int, len(needles)), exact: exact}
	for k, n := range needles {
		best, bestRank := 0, -1
		for j := 0; j < len(n); j++ {
			r := strings.IndexByte(byteOrder, n[j])
			if r < 0 {
				r = len(byteOrder)
			}
			if r > bestRank {
				best, bestRank = j, r
			}
		}
		f.off[k] = best
		c := n[best]
		f.at[c] |= 1 << k
		if 'a' <= c && c <= 'z' && !exact {
			f.at[c-'a'+'A'] |= 1 << k
		}
	}
	return f
}

// in reports whether s contains one of the needles, ASCII case ignored
// (with its case when exact).
func (f *foldSet) in(s string) bool { return f.index(s) >= 0 }

// index is the start of the first needle s holds when scanning it by anchor
// byte (some occurrence, not always the leftmost), or -1 for none.
func (f *foldSet) index(s string) int {
	for i := 0; i < len(s); i++ {
		m := f.at[s[i]]
		for m != 0 {
			k := bits.TrailingZeros64(m)
			m &= m - 1
			start := i - f.off[k]
			if start < 0 {
				continue
			}
			if f.exact {
				if strings.HasPrefix(s[start:], f.needles[k]) {
					return start
				}
			} else if hasFoldPrefix(s[start:], f.needles[k]) {
				return start
			}
		}
	}
	return -1
}

// hasFoldPrefix reports whether s starts with the lower-case needle n,
// ignoring the case of ASCII letters of s.
func hasFoldPrefix(s, n string) bool {
	if len(s) < len(n) {
		return false
	}
	for j := 0; j < len(n); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != n[j] {
			return false
		}
	}
	return true
}

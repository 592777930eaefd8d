package compaction

import (
	"math/bits"
	"strings"
)

// gramSet is a filter of the 4-byte substrings of a text: a bit per hash of
// each one. A string with a 4-byte substring whose bit is clear cannot be in
// the text, so most searches for line facts the text lacks end after a few
// bit tests instead of a scan of the whole text; the rest are searched.
type gramSet struct {
	text  string
	bits  []uint64
	shift uint
}

// gramLen is the length of the substrings a gramSet records.
const gramLen = 4

// gramProbes is how many of a needle's substrings contains tests.
const gramProbes = 8

// reset makes the set hold text's substrings, reusing its bits.
func (g *gramSet) reset(text string) {
	g.text = text
	// About 8 bits per position keeps the share of set bits low.
	lg := min(max(bits.Len(uint(8*len(text))), 10), 30)
	words := 1 << (lg - 6)
	if cap(g.bits) < words {
		g.bits = make([]uint64, words)
	} else {
		g.bits = g.bits[:words]
		clear(g.bits)
	}
	g.shift = uint(32 - lg)
	for i := 0; i+gramLen <= len(text); i++ {
		h := g.hash(text, i)
		g.bits[h>>6] |= 1 << (h & 63)
	}
}

// hash is the bit of the substring s[i:i+gramLen].
func (g *gramSet) hash(s string, i int) uint32 {
	x := uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
	return (x * 0x9E3779B1) >> g.shift
}

// has reports whether the substring s[i:i+gramLen] may be in the text.
func (g *gramSet) has(s string, i int) bool {
	h := g.hash(s, i)
	return g.bits[h>>6]&(1<<(h&63)) != 0
}

// contains is strings.Contains(text, needle).
func (g *gramSet) contains(needle string) bool {
	if n := len(needle) - gramLen; n > 0 {
		for k := range gramProbes {
			if !g.has(needle, k*n/(gramProbes-1)) {
				return false
			}
		}
	} else if n == 0 && !g.has(needle, 0) {
		return false
	}
	return strings.Contains(g.text, needle)
}

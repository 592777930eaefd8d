package compaction

import (
	"math/bits"
	"strings"
)

// gramIndex indexes the 8-byte substrings of a text by a hash: for each
// bucket, how many positions start a substring hashing there and the chain
// of those positions. A needle is in the text only if each of its 8-byte
// substrings is, at the same offset from the match, so contains walks the
// shortest chain among a few of the needle's substrings and compares the
// needle at each position it gives: a line fact the text lacks usually
// costs a few lookups (an empty bucket), and one it has a short walk, where
// strings.Contains would scan the text up to the match.
type gramIndex struct {
	text string
	// head is, by bucket, the last position+1 of a substring hashing
	// there (0: none); next chains each position to the previous one of
	// its bucket (+1, 0 ends); count is each bucket's chain length.
	head, count []uint32
	next        []uint32
	shift       uint
	// plain is set for a text too long for 32-bit positions: contains
	// then searches it.
	plain bool
}

// gramLen is the length of the substrings a gramIndex records.
const gramLen = 8

// gramProbes is how many of a needle's substrings contains looks up.
const gramProbes = 8

// reset makes the index hold text's substrings, reusing its arrays.
func (g *gramIndex) reset(text string) {
	g.text = text
	if g.plain = len(text) >= 1<<32-1; g.plain {
		return
	}
	// Between one and two positions a bucket.
	lg := min(max(bits.Len(uint(len(text)))-1, 8), 30)
	g.head, g.count = grow(g.head, 1<<lg), grow(g.count, 1<<lg)
	g.shift = uint(64 - lg)
	npos := max(len(text)-gramLen+1, 0)
	if cap(g.next) < npos {
		g.next = make([]uint32, npos)
	}
	g.next = g.next[:npos]
	for i := range npos {
		h := g.hash(text, i)
		g.next[i] = g.head[h]
		g.head[h] = uint32(i + 1)
		g.count[h]++
	}
}

// grow returns s with length n, all zero, reusing its array when it can.
func grow(s []uint32, n int) []uint32 {
	if cap(s) < n {
		return make([]uint32, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// hash is the bucket of the substring s[i:i+gramLen].
func (g *gramIndex) hash(s string, i int) uint64 {
	s = s[i : i+gramLen]
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	return (x * 0x9E3779B97F4A7C15) >> g.shift
}

// contains is strings.Contains(text, needle).
func (g *gramIndex) contains(needle string) bool {
	n := len(needle) - gramLen
	if n < 0 || g.plain {
		return strings.Contains(g.text, needle)
	}
	// The probe with the fewest positions: the needle's substring at off.
	off, bucket, fewest := 0, uint64(0), uint32(1<<32-1)
	for k := range gramProbes {
		o := k * n / (gramProbes - 1)
		h := g.hash(needle, o)
		c := g.count[h]
		if c == 0 {
			return false
		}
		if c < fewest {
			off, bucket, fewest = o, h, c
		}
	}
	for p := g.head[bucket]; p != 0; p = g.next[p-1] {
		start := int(p-1) - off
		if start >= 0 && start+len(needle) <= len(g.text) && g.text[start:start+len(needle)] == needle {
			return true
		}
	}
	return false
}

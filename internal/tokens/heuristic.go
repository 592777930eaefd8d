package tokens

import (
	"math/bits"

	"github.com/compactbench/compactbench/internal/transcript"
)

// The length functions below read 8 bytes at a time (a word) and classify
// its bytes with masks that set the top bit of each byte that matches.
const (
	lsb = 0x0101010101010101 // the lowest bit of every byte
	msb = 0x8080808080808080 // the highest bit of every byte
)

// word returns the 8 bytes of s at i, little-endian (one load).
func word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// below masks the bytes of x less than c (c ≤ 0x80), byte by byte exactly:
// no carry crosses a byte.
func below(x uint64, c byte) uint64 {
	return ^((x&^msb + (0x80-uint64(c))*lsb) | x) & msb
}

// equal masks the bytes of x equal to c.
func equal(x uint64, c byte) uint64 { return below(x^uint64(c)*lsb, 1) }

// utf16Word is utf16Len of the 8 bytes of x: continuation bytes (10xxxxxx)
// count 0, lead bytes of 4-byte sequences (11110xxx) 2, other bytes 1.
func utf16Word(x uint64) int {
	if x&msb == 0 {
		return 8
	}
	cont := x &^ (x << 1) & msb
	four := x & (x << 1) & (x << 2) & (x << 3) & msb
	return 8 - bits.OnesCount64(cont) + bits.OnesCount64(four)
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's
// String.length: one per rune, two for runes outside the Basic Multilingual
// Plane. s is UTF-8; a byte that is not a continuation byte starts a rune,
// and a 4-byte lead byte starts a rune that needs a surrogate pair.
func utf16Len(s string) int {
	n, i := 0, 0
	for ; i+8 <= len(s); i += 8 {
		n += utf16Word(word(s, i))
	}
	for ; i < len(s); i++ {
		n += utf16Units(s[i])
	}
	return n
}

// utf16Units is what one byte adds to utf16Len.
func utf16Units(c byte) int {
	switch {
	case c&0xC0 == 0x80:
		return 0
	case c >= 0xF0:
		return 2
	}
	return 1
}

// jsonStringLen is the UTF-16 length of JSON.stringify(s): the quotes, two
// characters for \" \\ \b \f \n \r \t, six for other control characters, and
// the characters themselves otherwise.
func jsonStringLen(s string) int {
	n, i := 2, 0
	for ; i+8 <= len(s); i += 8 {
		x := word(s, i)
		n += utf16Word(x) + bits.OnesCount64(equal(x, '"')|equal(x, '\\'))
		if ctrl := below(x, 0x20); ctrl != 0 {
			short := equal(x, '\n') | equal(x, '\t') | equal(x, '\r') | equal(x, '\b') | equal(x, '\f')
			n += 5*bits.OnesCount64(ctrl) - 4*bits.OnesCount64(short)
		}
	}
	for ; i < len(s); i++ {
		n += jsonUnits(s[i])
	}
	return n
}

// utf16JSONLen is utf16Len(s) and jsonStringLen(s) in one pass.
func utf16JSONLen(s string) (u, j int) {
	extra, i := 2, 0
	for ; i+8 <= len(s); i += 8 {
		x := word(s, i)
		u += utf16Word(x)
		extra += bits.OnesCount64(equal(x, '"') | equal(x, '\\'))
		if ctrl := below(x, 0x20); ctrl != 0 {
			short := equal(x, '\n') | equal(x, '\t') | equal(x, '\r') | equal(x, '\b') | equal(x, '\f')
			extra += 5*bits.OnesCount64(ctrl) - 4*bits.OnesCount64(short)
		}
	}
	for ; i < len(s); i++ {
		c := utf16Units(s[i])
		u += c
		extra += jsonUnits(s[i]) - c
	}
	return u, u + extra
}

// chars4Pair is chars4's and chars4msg's counts of one block, each text
// read once (a run measures both).
func chars4Pair(b *transcript.Block) (c4, c4msg int) {
	switch b.Kind {
	case transcript.BlockText, transcript.BlockInjected:
		n := ceil4(utf16Len(b.Text))
		return n, n
	case transcript.BlockToolUse:
		name, in := utf16Len(b.ToolName), utf16Len(b.Input)
		return ceil4(name + in), ceil4(name) + ceil4(in)
	case transcript.BlockToolResult:
		u, j := utf16JSONLen(b.Text)
		return ceil4(u), ceil4(j)
	case transcript.BlockImage:
		return 0, 0
	}
	return ceil4(utf16Len(b.Text)), 0
}

// jsonUnits is what one byte adds to jsonStringLen.
func jsonUnits(c byte) int {
	switch {
	case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
		return 2
	case c < 0x20:
		return 6
	}
	return utf16Units(c)
}

// ceil4 is ceil(n/4) for n >= 0.
func ceil4(n int) int { return (n + 3) / 4 }

// chars4 is seed 004's estimateTokens applied to each block's text.
type chars4 struct{}

func (chars4) message() int { return 0 }

func (chars4) block(b *transcript.Block) int {
	switch b.Kind {
	case transcript.BlockToolUse:
		return ceil4(utf16Len(b.ToolName) + utf16Len(b.Input))
	case transcript.BlockImage:
		return 0
	}
	return ceil4(utf16Len(b.Text))
}

// chars4msg is seed 004's estimateMessagesTokens.
type chars4msg struct{}

func (chars4msg) message() int { return 2 }

func (chars4msg) block(b *transcript.Block) int {
	switch b.Kind {
	case transcript.BlockText, transcript.BlockInjected:
		return ceil4(utf16Len(b.Text))
	case transcript.BlockToolUse:
		return ceil4(utf16Len(b.ToolName)) + ceil4(utf16Len(b.Input))
	case transcript.BlockToolResult:
		return ceil4(jsonStringLen(b.Text))
	}
	return 0
}

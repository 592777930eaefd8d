package loader

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// This file holds the rules every reader applies to JSON values, whatever
// the format:
//
//   - Duplicate keys: the last one wins, as JSON.parse (and so the tools that
//     write these files) reads them. The parser keeps every member and its
//     Get returns the first, so each parsed record goes through lastWins,
//     which deletes the earlier duplicates.
//   - Non-finite numbers: NaN and Infinity are not JSON; the parser reads the
//     literals NaN, nan and inf as numbers (Infinity not at all: the record
//     is malformed) and a number too large for a float (1e999999) as
//     infinity. No count or size is read from such a value: a token count
//     that is not a finite integer is a problem (see countAt).
//   - Token counts are integers in [0, MaxTokenCount]; a count that is
//     negative, fractional, huge, non-finite or not a number at all is a
//     problem, and the call's usage counts as missing, never as a wrong
//     number.

// MaxTokenCount is the largest token count accepted in a usage object.
const MaxTokenCount = 1_000_000_000

// lastWins deletes, in every object of v, the members whose key appears
// again later in the same object, so that Get finds the last one. It also
// decodes every string of v, so that MarshalTo renders v the same whatever
// was read of it before. One walker serves a whole record, so that the walk
// allocates nothing unless a duplicate is found.
func lastWins(v *fastjson.Value) { dedupWalk(v, true) }

// lastWinsLazy is lastWins without decoding the strings: a string is decoded
// when it is read, so the ones never read (a record's UI-only fields) cost
// nothing. A reader using it must render a value with marshal, never
// MarshalTo, to get the text lastWins would give.
func lastWinsLazy(v *fastjson.Value) { dedupWalk(v, false) }

// lastWinsTop is lastWinsLazy for a record whose members are read below
// their top level only when deep names them: the values of the others are
// never looked into (a Claude Code record's toolUseResult, often most of
// its bytes), so their duplicate keys cannot matter and are not looked for.
// The record's own duplicate keys are deleted as always.
func lastWinsTop(v *fastjson.Value, deep map[string]bool) {
	if v.GetObject() == nil {
		lastWinsLazy(v)
		return
	}
	w := dedups.Get().(*dedup)
	w.decode, w.deep = false, deep
	w.walk(v)
	w.release()
}

// dedupWalk runs a pooled walker over v.
func dedupWalk(v *fastjson.Value, decode bool) {
	if v == nil {
		return
	}
	if v.GetObject() == nil && v.GetArray() == nil {
		if decode {
			v.Type()
		}
		return
	}
	w := dedups.Get().(*dedup)
	w.decode = decode
	w.walk(v)
	w.release()
}

// release resets a walker and returns it to the pool.
func (w *dedup) release() {
	clear(w.keys[:cap(w.keys)]) // drop the references to v's keys
	w.keys, w.dups, w.base, w.mask, w.deep = w.keys[:0], w.dups[:0], 0, 0, nil
	dedups.Put(w)
}

// marshal appends the JSON of v, a value lastWinsLazy walked, as
// MarshalTo renders it after lastWins: strings and keys decoded, then
// quoted again as fastjson quotes them (quoteJSON); numbers and literals as
// written.
func marshal(dst []byte, v *fastjson.Value) []byte {
	switch v.Type() {
	case fastjson.TypeObject:
		dst = append(dst, '{')
		first := true
		v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = quoteJSON(dst, k)
			dst = append(dst, ':')
			dst = marshal(dst, x)
		})
		return append(dst, '}')
	case fastjson.TypeArray:
		dst = append(dst, '[')
		for i, x := range v.GetArray() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = marshal(dst, x)
		}
		return append(dst, ']')
	case fastjson.TypeString:
		return quoteJSON(dst, v.GetStringBytes())
	}
	return v.MarshalTo(dst)
}

// quoteJSON appends s quoted as fastjson's MarshalTo quotes a decoded
// string: as it is when it holds no '"', '\\' or control character, else
// as strconv.AppendQuote does, byte for byte. Runs of printable ASCII are
// copied whole, which strconv's rune-by-rune loop does not do.
func quoteJSON(dst, s []byte) []byte {
	dst = append(dst, '"')
	if !specialChars(s) {
		return append(append(dst, s...), '"')
	}
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= ' ' && s[j] < 0x7f && s[j] != '"' && s[j] != '\\' {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			dst = escapeASCII(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRune(s[i:])
		switch {
		case w == 1: // not UTF-8
			dst = append(dst, '\\', 'x', lowerHex[s[i]>>4], lowerHex[s[i]&0xf])
		case strconv.IsPrint(r):
			dst = append(dst, s[i:i+w]...)
		case r < 0x10000:
			dst = append(dst, '\\', 'u')
			for sh := 12; sh >= 0; sh -= 4 {
				dst = append(dst, lowerHex[r>>uint(sh)&0xf])
			}
		default:
			dst = append(dst, '\\', 'U')
			for sh := 28; sh >= 0; sh -= 4 {
				dst = append(dst, lowerHex[r>>uint(sh)&0xf])
			}
		}
		i += w
	}
	return append(dst, '"')
}

const lowerHex = "0123456789abcdef"

// specialChars reports whether s holds a '"', '\\' or control character:
// the strings fastjson quotes with strconv rather than as they are.
func specialChars(s []byte) bool {
	if bytes.IndexByte(s, '"') >= 0 || bytes.IndexByte(s, '\\') >= 0 {
		return true
	}
	for _, c := range s {
		if c < ' ' {
			return true
		}
	}
	return false
}

// escapeASCII appends an ASCII byte that is not printable, or is '"' or
// '\\', as strconv.Quote escapes it.
func escapeASCII(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\a':
		return append(dst, '\\', 'a')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\v':
		return append(dst, '\\', 'v')
	}
	return append(dst, '\\', 'x', lowerHex[c>>4], lowerHex[c&0xf])
}

// decodeAll decodes every string and key of v (Type decodes a string,
// Visit an object's keys).
func decodeAll(v *fastjson.Value) {
	switch v.Type() {
	case fastjson.TypeObject:
		v.GetObject().Visit(func(_ []byte, x *fastjson.Value) { decodeAll(x) })
	case fastjson.TypeArray:
		for _, x := range v.GetArray() {
			decodeAll(x)
		}
	}
}

// dedups recycles walkers between records.
var dedups = sync.Pool{New: func() any {
	w := &dedup{}
	w.visitFn = w.visit
	return w
}}

// dedup walks a parsed value for lastWins.
type dedup struct {
	visitFn func(k []byte, x *fastjson.Value)
	// keys holds the keys met in the objects being walked, innermost last;
	// base is where the innermost object's keys start.
	keys [][]byte
	base int
	// mask has the bit keyBit of every key in keys[base:]: a key whose bit
	// is not set has no earlier twin, and is not compared with the others.
	mask uint64
	dups []string
	// decode makes the walk decode every string (lastWins).
	decode bool
	// deep, while the members of the top-level object are visited, names
	// the members walked into (lastWinsTop); nil everywhere else.
	deep map[string]bool
}

// walk visits an object's members or an array's elements; a scalar is
// decoded when the walk decodes, else left as it is. GetObject and GetArray
// test the type without decoding a string, which Type would.
func (w *dedup) walk(v *fastjson.Value) {
	if o := v.GetObject(); o != nil {
		if o.Len() == 0 {
			return
		}
		base, ndups, mask := w.base, len(w.dups), w.mask
		w.base, w.mask = len(w.keys), 0
		o.Visit(w.visitFn)
		w.keys = w.keys[:w.base]
		w.base, w.mask = base, mask
		for _, k := range w.dups[ndups:] {
			o.Del(k) // deletes the first member named k
		}
		w.dups = w.dups[:ndups]
		return
	}
	if a := v.GetArray(); a != nil {
		for _, x := range a {
			w.walk(x)
		}
		return
	}
	if w.decode {
		v.Type()
	}
}

func (w *dedup) visit(k []byte, x *fastjson.Value) {
	if n := len(w.keys) - w.base; n < 256 { // beyond, duplicates are not looked for
		bit := keyBit(k)
		if w.mask&bit != 0 {
			for _, seen := range w.keys[w.base:] {
				if bytes.Equal(seen, k) {
					w.dups = append(w.dups, string(k))
					break
				}
			}
		}
		w.mask |= bit
		w.keys = append(w.keys, k)
	}
	if deep := w.deep; deep != nil {
		if (x.GetObject() == nil && x.GetArray() == nil) || !deep[string(k)] {
			return // a scalar has nothing to walk: spare the lookup
		}
		w.deep = nil
		w.walk(x)
		w.deep = deep
		return
	}
	w.walk(x)
}

// keyBit returns a bit of 64 chosen by a key's length and its first and
// last bytes: equal keys have equal bits, and the few keys of an object
// seldom share one.
func keyBit(k []byte) uint64 {
	h := uint(len(k))
	if len(k) > 0 {
		h = h*7 + uint(k[0])*3 + uint(k[len(k)-1])
	}
	return 1 << (h & 63)
}

// countAt reads the token count at keys in u. Absent or null, it is 0.
// Otherwise it must be a number holding an integer in [0, MaxTokenCount]
// (12 and 12.0 alike); anything else returns a reason.
func countAt(u *fastjson.Value, keys ...string) (int64, string) {
	x := u.Get(keys...)
	if x == nil || x.Type() == fastjson.TypeNull {
		return 0, ""
	}
	name := keys[len(keys)-1]
	if x.Type() != fastjson.TypeNumber {
		return 0, fmt.Sprintf("%s is a %s, want a number (%s)", name, x.Type(), excerpt(x.MarshalTo(nil)))
	}
	if n, err := x.Int64(); err == nil && n >= 0 && n <= MaxTokenCount {
		return n, "" // the common case
	}
	// A number's text holds only digits, signs, '.', 'e' and the letters
	// of nan and inf: shown as is, clipped.
	num := string(x.MarshalTo(nil))
	if len(num) > 40 {
		num = num[:40] + "…"
	}
	f, err := x.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Sprintf("%s is not a finite number (%s)", name, num)
	}
	if f != math.Trunc(f) || f < 0 || f > MaxTokenCount {
		return 0, fmt.Sprintf("%s = %s, want an integer from 0 to %d", name, num, MaxTokenCount)
	}
	return int64(f), ""
}

// usageFields are the token counts usageOf reads.
var usageFields = [][]string{
	{"input_tokens"}, {"output_tokens"}, {"cache_read_input_tokens"}, {"cache_creation_input_tokens"},
	{"prompt_tokens"}, {"completion_tokens"}, {"prompt_tokens_details", "cached_tokens"},
}

// usageProblem checks the token counts of a usage object (fields, or
// usageFields when none are given) and returns a reason for the first that
// is not a valid count, or "".
func usageProblem(u *fastjson.Value, fields ...[]string) string {
	if u == nil || u.Type() != fastjson.TypeObject {
		return ""
	}
	if len(fields) == 0 {
		fields = usageFields
	}
	for _, keys := range fields {
		if _, why := countAt(u, keys...); why != "" {
			return "usage: " + why + "; the call's usage counts as missing"
		}
	}
	return ""
}

// excerpt quotes at most a short prefix of b, escaped, for a problem
// reason: input text never reaches a reason unquoted or whole.
func excerpt(b []byte) string {
	const max = 40
	s := string(b)
	if len(b) > max {
		cut := max
		for cut > 0 && (b[cut]&0xc0) == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = string(b[:cut]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

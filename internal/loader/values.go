package loader

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"sync"

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

// dedupWalk runs a pooled walker over v.
func dedupWalk(v *fastjson.Value, decode bool) {
	if v == nil || (v.GetObject() == nil && v.GetArray() == nil) {
		return
	}
	w := dedups.Get().(*dedup)
	w.decode = decode
	w.walk(v)
	clear(w.keys[:cap(w.keys)]) // drop the references to v's keys
	w.keys, w.dups, w.base = w.keys[:0], w.dups[:0], 0
	dedups.Put(w)
}

// marshal appends the JSON of v, a value lastWinsLazy walked, as
// MarshalTo renders it after lastWins: strings and keys decoded, then
// quoted again.
func marshal(dst []byte, v *fastjson.Value) []byte {
	decodeAll(v)
	return v.MarshalTo(dst)
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
	dups []string
	// decode makes the walk decode every string (lastWins).
	decode bool
}

// walk visits an object's members or an array's elements; a scalar is
// decoded when the walk decodes, else left as it is. GetObject and GetArray
// test the type without decoding a string, which Type would.
func (w *dedup) walk(v *fastjson.Value) {
	if o := v.GetObject(); o != nil {
		if o.Len() == 0 {
			return
		}
		base, ndups := w.base, len(w.dups)
		w.base = len(w.keys)
		o.Visit(w.visitFn)
		w.keys = w.keys[:w.base]
		w.base = base
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
		for _, seen := range w.keys[w.base:] {
			if bytes.Equal(seen, k) {
				w.dups = append(w.dups, string(k))
				break
			}
		}
		w.keys = append(w.keys, k)
	}
	w.walk(x)
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

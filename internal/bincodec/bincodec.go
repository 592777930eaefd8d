// Package bincodec encodes plain Go values (structs of numbers, strings,
// slices, arrays, maps and pointers) in a compact binary layout and decodes
// them back exactly: nil and empty slices and maps stay apart, floats keep
// every bit (NaN and infinities included) and strings every byte (invalid
// UTF-8 included). It is for caches written and read by the same build: the
// layout carries no field names or types, so a Codec's Fingerprint, which
// describes the layout, must be part of whatever keys the encoded bytes.
//
// Layout: unsigned integers and lengths are uvarints, signed integers
// zig-zag varints, floats their IEEE 754 bits (8 or 4 bytes, little-endian),
// booleans one byte. A string is a uvarint t: t = 0 is "", odd t is the
// (t>>1)-th distinct non-empty string seen before in the same value (so the
// path repeated in every row costs a byte or two), even t is a new string of
// t>>1 bytes that follow. A slice or map is a uvarint n: 0 for nil, else its
// length + 1, then its elements (a map's keys in sorted order when they are
// strings or integers). A pointer is one byte, 0 for nil or 1 followed by
// its value. A struct is its fields in order, except the unexported ones,
// those tagged json:"-" and those the Codec's skip function names.
package bincodec

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Codec encodes and decodes values of one type.
type Codec struct {
	typ  reflect.Type
	plan *plan
	fp   string
}

// plan is the compiled encoder and decoder of one type.
type plan struct {
	enc func(e *encoder, v reflect.Value)
	dec func(d *decoder, v reflect.Value)
}

// New compiles a Codec for the type of v (a value or a pointer to one:
// Encode and Decode take a pointer to the type). skip, when not nil, leaves
// out struct fields it returns true for; a decoded value has them zero.
// It fails on types the layout cannot hold: interfaces, functions, channels,
// unsafe pointers, complex numbers.
func New(v any, skip func(reflect.StructField) bool) (*Codec, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, errors.New("bincodec: nil type")
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c := &compiler{skip: skip, plans: map[reflect.Type]*plan{}}
	var fp strings.Builder
	c.fp = &fp
	p, err := c.compile(t)
	if err != nil {
		return nil, err
	}
	return &Codec{typ: t, plan: p, fp: fp.String()}, nil
}

// Fingerprint describes the layout: it changes whenever a type, field name
// or field order reachable from the codec's type changes.
func (c *Codec) Fingerprint() string { return c.fp }

// Append appends the encoding of *ptr (ptr must point to the codec's type)
// to buf.
func (c *Codec) Append(buf []byte, ptr any) []byte {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != c.typ {
		panic(fmt.Sprintf("bincodec: Append of %T, codec of *%s", ptr, c.typ))
	}
	e := encPool.Get().(*encoder)
	e.buf = buf
	c.plan.enc(e, v.Elem())
	buf = e.buf
	e.buf = nil
	clear(e.strs)
	encPool.Put(e)
	return buf
}

// Decode decodes data, which must hold exactly one encoded value, into
// *ptr; the result shares no memory with data. It fails, never panics, on
// data that is not such an encoding.
func (c *Codec) Decode(data []byte, ptr any) (err error) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != c.typ {
		return fmt.Errorf("bincodec: Decode into %T, codec of *%s", ptr, c.typ)
	}
	// The decoder reads data in place; every string it returns is a copy
	// (one per distinct string), so a decoded value keeps no part of data.
	d := &decoder{data: unsafe.String(unsafe.SliceData(data), len(data))}
	defer func() {
		if r := recover(); r != nil {
			if de, ok := r.(decodeError); ok {
				err = de
				return
			}
			panic(r)
		}
	}()
	c.plan.dec(d, v.Elem())
	if d.off != len(d.data) {
		return decodeError{fmt.Sprintf("%d bytes after the value", len(d.data)-d.off)}
	}
	return nil
}

type encoder struct {
	buf  []byte
	strs map[string]uint64
}

var encPool = sync.Pool{New: func() any { return &encoder{strs: map[string]uint64{}} }}

func (e *encoder) uvarint(x uint64) { e.buf = binary.AppendUvarint(e.buf, x) }

func (e *encoder) str(s string) {
	if s == "" {
		e.buf = append(e.buf, 0)
		return
	}
	if k, ok := e.strs[s]; ok {
		e.uvarint(k<<1 | 1)
		return
	}
	e.strs[s] = uint64(len(e.strs))
	e.uvarint(uint64(len(s)) << 1)
	e.buf = append(e.buf, s...)
}

// decodeError is what a decoder panics with on bad data; Decode returns it.
type decodeError struct{ msg string }

func (e decodeError) Error() string { return "bincodec: " + e.msg }

type decoder struct {
	data string
	off  int
	strs []string
}

func (d *decoder) fail(format string, args ...any) {
	panic(decodeError{fmt.Sprintf(format, args...)})
}

func (d *decoder) uvarint() uint64 {
	var x uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if d.off >= len(d.data) {
			d.fail("truncated at byte %d", d.off)
		}
		b := d.data[d.off]
		d.off++
		if b < 0x80 {
			if shift == 63 && b > 1 {
				break
			}
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
	}
	d.fail("varint overflow at byte %d", d.off)
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (d *decoder) bytes(n int) string {
	if n < 0 || n > len(d.data)-d.off {
		d.fail("%d bytes wanted at byte %d of %d", n, d.off, len(d.data))
	}
	s := d.data[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) str() string {
	t := d.uvarint()
	if t&1 == 1 {
		k := t >> 1
		if k >= uint64(len(d.strs)) {
			d.fail("string reference %d of %d", k, len(d.strs))
		}
		return d.strs[k]
	}
	if t == 0 {
		return ""
	}
	if t>>1 > uint64(len(d.data)) {
		d.fail("string of %d bytes at byte %d", t>>1, d.off)
	}
	s := strings.Clone(d.bytes(int(t >> 1)))
	d.strs = append(d.strs, s)
	return s
}

// length reads a slice or map length: -1 for nil. Every element takes at
// least a byte, so a length beyond the data left is corrupt (this bounds
// what a corrupt entry can make Decode allocate).
func (d *decoder) length() int {
	n := d.uvarint()
	if n == 0 {
		return -1
	}
	if n-1 > uint64(len(d.data)-d.off) {
		d.fail("length %d at byte %d exceeds the data", n-1, d.off)
	}
	return int(n - 1)
}

// maxPrealloc is the most Decode allocates for a slice or map before it
// has decoded its elements: a length is only checked against the bytes
// left (one an element at least), and an element may take hundreds of
// bytes in memory, so a crafted length could otherwise allocate far more
// than the entry's size.
const maxPrealloc = 1 << 20

// preallocated is how many of n elements of size bytes to allocate at
// first (at least one when n > 0); a slice then grows by doubling.
func preallocated(n int, size uintptr) int {
	if size == 0 || uintptr(n)*size <= maxPrealloc {
		return n
	}
	return max(1, int(maxPrealloc/size))
}

type compiler struct {
	skip  func(reflect.StructField) bool
	plans map[reflect.Type]*plan
	fp    *strings.Builder
}

// compile returns the plan of t, compiling it (and the types it holds)
// on first use and writing its description to the fingerprint.
func (c *compiler) compile(t reflect.Type) (*plan, error) {
	if p, ok := c.plans[t]; ok {
		fmt.Fprintf(c.fp, "@%s;", t)
		return p, nil
	}
	p := &plan{}
	c.plans[t] = p // recursive types refer to it before it is filled
	fmt.Fprintf(c.fp, "%s:%s", t, t.Kind())
	var err error
	switch t.Kind() {
	case reflect.Bool:
		boolPlan(p)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		intPlan(p)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		uintPlan(p)
	case reflect.Float64:
		float64Plan(p)
	case reflect.Float32:
		float32Plan(p)
	case reflect.String:
		p.enc = func(e *encoder, v reflect.Value) { e.str(v.String()) }
		p.dec = func(d *decoder, v reflect.Value) { v.SetString(d.str()) }
	case reflect.Pointer:
		err = c.pointerPlan(p, t)
	case reflect.Slice:
		err = c.slicePlan(p, t)
	case reflect.Array:
		err = c.arrayPlan(p, t)
	case reflect.Map:
		err = c.mapPlan(p, t)
	case reflect.Struct:
		err = c.structPlan(p, t)
	default:
		return nil, fmt.Errorf("bincodec: cannot encode %s (%s)", t, t.Kind())
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// boolPlan fills p for a bool: one byte, 0 or 1.
func boolPlan(p *plan) {
	p.enc = func(e *encoder, v reflect.Value) {
		b := byte(0)
		if v.Bool() {
			b = 1
		}
		e.buf = append(e.buf, b)
	}
	p.dec = func(d *decoder, v reflect.Value) {
		switch d.bytes(1)[0] {
		case 0:
		case 1:
			v.SetBool(true)
		default:
			d.fail("bad boolean at byte %d", d.off-1)
		}
	}
}

// intPlan fills p for a signed integer: a varint, checked for overflow of
// the field's type on decoding.
func intPlan(p *plan) {
	p.enc = func(e *encoder, v reflect.Value) { e.buf = binary.AppendVarint(e.buf, v.Int()) }
	p.dec = func(d *decoder, v reflect.Value) {
		x := d.varint()
		if v.OverflowInt(x) {
			d.fail("%d overflows %s", x, v.Type())
		}
		v.SetInt(x)
	}
}

// uintPlan fills p for an unsigned integer: a uvarint, checked for
// overflow of the field's type on decoding.
func uintPlan(p *plan) {
	p.enc = func(e *encoder, v reflect.Value) { e.uvarint(v.Uint()) }
	p.dec = func(d *decoder, v reflect.Value) {
		x := d.uvarint()
		if v.OverflowUint(x) {
			d.fail("%d overflows %s", x, v.Type())
		}
		v.SetUint(x)
	}
}

// float64Plan fills p for a float64: the 8 bytes of its bits, little-endian.
func float64Plan(p *plan) {
	p.enc = func(e *encoder, v reflect.Value) {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v.Float()))
	}
	p.dec = func(d *decoder, v reflect.Value) {
		v.SetFloat(math.Float64frombits(le64(d.bytes(8))))
	}
}

// float32Plan fills p for a float32: the 4 bytes of its bits, little-endian.
func float32Plan(p *plan) {
	p.enc = func(e *encoder, v reflect.Value) {
		e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(float32(v.Float())))
	}
	p.dec = func(d *decoder, v reflect.Value) {
		b := d.bytes(4)
		v.SetFloat(float64(math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)))
	}
}

// pointerPlan fills p for the pointer type t: a tag byte (0 for nil, 1
// for a value) then the pointed-to value.
func (c *compiler) pointerPlan(p *plan, t reflect.Type) error {
	ep, err := c.compile(t.Elem())
	if err != nil {
		return err
	}
	p.enc = func(e *encoder, v reflect.Value) {
		if v.IsNil() {
			e.buf = append(e.buf, 0)
			return
		}
		e.buf = append(e.buf, 1)
		ep.enc(e, v.Elem())
	}
	elem := t.Elem()
	p.dec = func(d *decoder, v reflect.Value) {
		switch d.bytes(1)[0] {
		case 0:
		case 1:
			nv := reflect.New(elem)
			ep.dec(d, nv.Elem())
			v.Set(nv)
		default:
			d.fail("bad pointer tag at byte %d", d.off-1)
		}
	}
	return nil
}

// slicePlan fills p for the slice type t: the length plus one (0 for a
// nil slice) then the elements.
func (c *compiler) slicePlan(p *plan, t reflect.Type) error {
	ep, err := c.compile(t.Elem())
	if err != nil {
		return err
	}
	p.enc = func(e *encoder, v reflect.Value) {
		if v.IsNil() {
			e.buf = append(e.buf, 0)
			return
		}
		n := v.Len()
		e.uvarint(uint64(n) + 1)
		for i := 0; i < n; i++ {
			ep.enc(e, v.Index(i))
		}
	}
	size := t.Elem().Size()
	p.dec = func(d *decoder, v reflect.Value) {
		n := d.length()
		if n < 0 {
			return
		}
		c := preallocated(n, size)
		s := reflect.MakeSlice(t, c, c)
		for i := 0; i < n; i++ {
			if i == s.Len() { // grow by doubling, up to n
				g := reflect.MakeSlice(t, min(2*i, n), min(2*i, n))
				reflect.Copy(g, s)
				s = g
			}
			ep.dec(d, s.Index(i))
		}
		v.Set(s)
	}
	return nil
}

// arrayPlan fills p for the array type t: its elements, with no length
// (the type fixes it; the fingerprint records it).
func (c *compiler) arrayPlan(p *plan, t reflect.Type) error {
	ep, err := c.compile(t.Elem())
	if err != nil {
		return err
	}
	fmt.Fprintf(c.fp, "[%d]", t.Len())
	n := t.Len()
	p.enc = func(e *encoder, v reflect.Value) {
		for i := 0; i < n; i++ {
			ep.enc(e, v.Index(i))
		}
	}
	p.dec = func(d *decoder, v reflect.Value) {
		for i := 0; i < n; i++ {
			ep.dec(d, v.Index(i))
		}
	}
	return nil
}

// mapPlan fills p for the map type t: the length plus one (0 for a nil
// map) then the key and value of each entry, keys in sortKeys' order.
func (c *compiler) mapPlan(p *plan, t reflect.Type) error {
	kp, err := c.compile(t.Key())
	if err != nil {
		return err
	}
	vp, err := c.compile(t.Elem())
	if err != nil {
		return err
	}
	p.enc = func(e *encoder, v reflect.Value) {
		if v.IsNil() {
			e.buf = append(e.buf, 0)
			return
		}
		keys := v.MapKeys()
		sortKeys(keys)
		e.uvarint(uint64(len(keys)) + 1)
		for _, k := range keys {
			kp.enc(e, k)
			vp.enc(e, v.MapIndex(k))
		}
	}
	kt, et := t.Key(), t.Elem()
	size := kt.Size() + et.Size()
	p.dec = func(d *decoder, v reflect.Value) {
		n := d.length()
		if n < 0 {
			return
		}
		m := reflect.MakeMapWithSize(t, preallocated(n, size))
		for i := 0; i < n; i++ {
			k, x := reflect.New(kt).Elem(), reflect.New(et).Elem()
			kp.dec(d, k)
			vp.dec(d, x)
			m.SetMapIndex(k, x)
		}
		v.Set(m)
	}
	return nil
}

// structPlan fills p for the struct type t: its encoded fields in order
// (exported, not tagged json:"-", not skipped), each named in the
// fingerprint.
func (c *compiler) structPlan(p *plan, t reflect.Type) error {
	var idx []int
	var fps []*plan
	c.fp.WriteString("{")
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" || (c.skip != nil && c.skip(f)) {
			continue
		}
		fmt.Fprintf(c.fp, "%s ", f.Name)
		fp, err := c.compile(f.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		c.fp.WriteString(";")
		idx = append(idx, i)
		fps = append(fps, fp)
	}
	c.fp.WriteString("}")
	p.enc = func(e *encoder, v reflect.Value) {
		for k, i := range idx {
			fps[k].enc(e, v.Field(i))
		}
	}
	p.dec = func(d *decoder, v reflect.Value) {
		for k, i := range idx {
			fps[k].dec(d, v.Field(i))
		}
	}
	return nil
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// sortKeys orders map keys of string or integer kinds; others stay in
// map order (the decoded map is the same either way).
func sortKeys(keys []reflect.Value) {
	if len(keys) < 2 {
		return
	}
	switch keys[0].Kind() {
	case reflect.String:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Int(), b.Int()) })
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Uint(), b.Uint()) })
	}
}

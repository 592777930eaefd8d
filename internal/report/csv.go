package report

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// The CSV files are written by appendRecord, which formats each cell
// straight into the output buffer: no string per number, no []string per
// row. Its bytes are those of encoding/csv's Writer with its defaults
// (comma, "\n" line ends), which the tests check field by field.

// appendRecord appends one row, the struct at row, as a CSV line of the
// columns cols (columnsOf the row's type).
func appendRecord(b []byte, row unsafe.Pointer, cols []column) []byte {
	for j := range cols {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendCell(b, row, &cols[j]) // a column is 88 bytes: not copied per cell
	}
	return append(b, '\n')
}

// appendCell appends the CSV field of column c of the row struct at row:
// the field is read at its offset (reflect.Value.Field cost more than the
// formatting), formatted as FormatFloat and strconv do, quoted as
// encoding/csv quotes.
func appendCell(b []byte, row unsafe.Pointer, c *column) []byte {
	p := unsafe.Add(row, c.off)
	if c.ptr {
		p = *(*unsafe.Pointer)(p)
		if p == nil {
			return b
		}
	}
	// Numbers and booleans never hold a character that needs quotes.
	switch c.kind {
	case reflect.String:
		return appendField(b, *(*string)(p))
	case reflect.Int:
		return strconv.AppendInt(b, int64(*(*int)(p)), 10)
	case reflect.Int8:
		return strconv.AppendInt(b, int64(*(*int8)(p)), 10)
	case reflect.Int16:
		return strconv.AppendInt(b, int64(*(*int16)(p)), 10)
	case reflect.Int32:
		return strconv.AppendInt(b, int64(*(*int32)(p)), 10)
	case reflect.Int64:
		return strconv.AppendInt(b, *(*int64)(p), 10)
	case reflect.Uint:
		return strconv.AppendUint(b, uint64(*(*uint)(p)), 10)
	case reflect.Uint8:
		return strconv.AppendUint(b, uint64(*(*uint8)(p)), 10)
	case reflect.Uint16:
		return strconv.AppendUint(b, uint64(*(*uint16)(p)), 10)
	case reflect.Uint32:
		return strconv.AppendUint(b, uint64(*(*uint32)(p)), 10)
	case reflect.Uint64:
		return strconv.AppendUint(b, *(*uint64)(p), 10)
	case reflect.Float32:
		return appendFloat(b, float64(*(*float32)(p)))
	case reflect.Float64:
		return appendFloat(b, *(*float64)(p))
	case reflect.Bool:
		return strconv.AppendBool(b, *(*bool)(p))
	}
	if c.list != nil {
		if _, n := sliceAt(p); n == 0 {
			return append(b, "[]"...)
		}
		return c.list.appendCell(b, p)
	}
	f := reflect.NewAt(c.typ, p).Elem()
	if c.kind == reflect.Slice {
		// A list cell (a LIST column in Parquet) is its JSON array in CSV.
		if f.Len() == 0 {
			return append(b, "[]"...)
		}
		js, err := json.Marshal(f.Interface())
		if err != nil {
			return appendField(b, err.Error())
		}
		return appendField(b, string(js))
	}
	return appendField(b, fmt.Sprint(f.Interface()))
}

// appendFloat appends FormatFloat(v).
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// appendField appends s as a CSV field: verbatim, or between double quotes
// with each quote doubled when it holds a comma, a quote, a line break, is
// `\.`, or starts with a space (as encoding/csv decides).
func appendField(b []byte, s string) []byte {
	if !fieldNeedsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b = append(b, s...)
			break
		}
		b = append(b, s[:i+1]...)
		b = append(b, '"')
		s = s[i+1:]
	}
	return append(b, '"')
}

// csvSpecial marks the bytes that make a field quoted wherever they are
// (static data: no work at start).
var csvSpecial = [256]bool{'\n': true, '\r': true, '"': true, ',': true}

// fieldNeedsQuotes is encoding/csv's rule with a comma delimiter.
func fieldNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` || hasSpecial(s) {
		return true
	}
	if c := s[0]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

// Bytes repeated in every byte of a word, for hasSpecial.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasSpecial reports whether s holds a byte of csvSpecial. It tests eight
// bytes at a time: a word x has a zero byte exactly when
// (x - ones) &^ x & highs is not zero, and x is the word XOR each special
// byte repeated (the paths and ids of every row are long, most cells of a
// table are such strings).
func hasSpecial(s string) bool {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for len(b) >= 8 {
		v := binary.LittleEndian.Uint64(b)
		x1, x2, x3, x4 := v^('\n'*ones), v^('\r'*ones), v^('"'*ones), v^(','*ones)
		if ((x1-ones)&^x1|(x2-ones)&^x2|(x3-ones)&^x3|(x4-ones)&^x4)&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if csvSpecial[c] {
			return true
		}
	}
	return false
}

// listJSON writes a list cell, the JSON array json.Marshal makes of a
// slice, quoted as a CSV field, without json.Marshal's reflection: for
// slices of strings, and of structs whose fields are strings and integers
// with plain JSON names (the tables' list columns), which listOf finds.
// The field is always quoted (its JSON holds a quote), so each quote is
// written doubled.
type listJSON struct {
	elem   reflect.Type
	str    bool // elements are strings; else structs of fields
	fields []listField
}

// listField is a struct field of a list element: its JSON name, its
// `""name"":` prefix (quotes doubled, a comma before all but the first),
// its offset and kind.
type listField struct {
	name string
	key  string
	off  uintptr
	kind reflect.Kind
}

// has says whether l has a field of JSON name name.
func (l *listJSON) has(name string) bool {
	for _, f := range l.fields {
		if f.name == name {
			return true
		}
	}
	return false
}

// listOf is the listJSON of slice type t, or nil when json.Marshal must
// write it (another element type, or a struct field json.Marshal would
// name or leave out otherwise).
func listOf(t reflect.Type) *listJSON {
	if t.Kind() != reflect.Slice {
		return nil
	}
	e := t.Elem()
	if e.Kind() == reflect.String && e.PkgPath() == "" { // a named string type could marshal itself
		return &listJSON{elem: e, str: true}
	}
	if e.Kind() != reflect.Struct || e.Implements(jsonMarshaler) || reflect.PointerTo(e).Implements(jsonMarshaler) ||
		e.Implements(textMarshaler) || reflect.PointerTo(e).Implements(textMarshaler) {
		return nil
	}
	l := &listJSON{elem: e}
	for i := 0; i < e.NumField(); i++ {
		f := e.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || opts != "" || name == "-" || !plainJSONName(name) {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if l.has(name) { // json.Marshal keeps one of two same-named fields, or neither
			return nil
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Int, reflect.Int64, reflect.Int32:
		default:
			return nil
		}
		if f.Type.PkgPath() != "" { // a named type could marshal itself
			return nil
		}
		key := `""` + name + `"":`
		if len(l.fields) > 0 {
			key = "," + key
		}
		l.fields = append(l.fields, listField{name: name, key: key, off: f.Offset, kind: f.Type.Kind()})
	}
	if len(l.fields) == 0 {
		return nil
	}
	return l
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// plainJSONName: a JSON key json.Marshal writes as it is (letters,
// digits and underscores).
func plainJSONName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// appendCell appends the CSV field of the non-empty slice at p.
func (l *listJSON) appendCell(b []byte, p unsafe.Pointer) []byte {
	data, n := sliceAt(p)
	size := l.elem.Size()
	b = append(b, '"', '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		e := unsafe.Add(data, uintptr(i)*size)
		if l.str {
			b = appendJSONString(b, *(*string)(e))
			continue
		}
		b = append(b, '{')
		for _, f := range l.fields {
			b = append(b, f.key...)
			fp := unsafe.Add(e, f.off)
			switch f.kind {
			case reflect.String:
				b = appendJSONString(b, *(*string)(fp))
			case reflect.Int:
				b = strconv.AppendInt(b, int64(*(*int)(fp)), 10)
			case reflect.Int64:
				b = strconv.AppendInt(b, *(*int64)(fp), 10)
			case reflect.Int32:
				b = strconv.AppendInt(b, int64(*(*int32)(fp)), 10)
			}
		}
		b = append(b, '}')
	}
	return append(b, ']', '"')
}

// sliceAt is the data pointer and length of the slice at p (a slice is its
// data pointer, length and capacity, in that order).
func sliceAt(p unsafe.Pointer) (unsafe.Pointer, int) {
	return *(*unsafe.Pointer)(p), *(*int)(unsafe.Add(p, unsafe.Sizeof(uintptr(0))))
}

// jsonPlain marks the bytes json.Marshal writes as they are in a string:
// printable ASCII but the quote, the backslash and the three it escapes
// for HTML (<, >, &).
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['"'], t['\\'], t['<'], t['>'], t['&'] = false, false, false, false, false
	return t
}()

// appendJSONString appends json.Marshal(s) with its quotes doubled: as
// it is when every byte is plain, else through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			js, _ := json.Marshal(s) // a string always marshals
			return appendDoubled(b, js)
		}
	}
	b = append(b, '"', '"')
	b = append(b, s...)
	return append(b, '"', '"')
}

// appendDoubled appends js with each quote doubled.
func appendDoubled(b, js []byte) []byte {
	for {
		i := bytes.IndexByte(js, '"')
		if i < 0 {
			return append(b, js...)
		}
		b = append(b, js[:i+1]...)
		b = append(b, '"')
		js = js[i+1:]
	}
}

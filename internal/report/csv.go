package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The CSV files are written by appendRecord, which formats each cell
// straight into the output buffer: no string per number, no []string per
// row. Its bytes are those of encoding/csv's Writer with its defaults
// (comma, "\n" line ends), which the tests check field by field.

// appendRecord appends one row of the columns cols of the struct v as a CSV
// line.
func appendRecord(b []byte, v reflect.Value, cols []column) []byte {
	for j, c := range cols {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendCell(b, v, c)
	}
	return append(b, '\n')
}

// appendCell appends the CSV field of column c of v: the text cell gives,
// quoted as encoding/csv quotes it.
func appendCell(b []byte, v reflect.Value, c column) []byte {
	var f reflect.Value
	if c.path != nil {
		f = v.FieldByIndex(c.path)
	} else {
		f = v.Field(c.index)
	}
	if c.ptr {
		if f.IsNil() {
			return b
		}
		f = f.Elem()
	}
	// Numbers and booleans never hold a character that needs quotes.
	switch c.kind {
	case reflect.String:
		return appendField(b, f.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, f.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, f.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return appendFloat(b, f.Float())
	case reflect.Bool:
		return strconv.AppendBool(b, f.Bool())
	case reflect.Slice:
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

// fieldNeedsQuotes is encoding/csv's rule with a comma delimiter.
func fieldNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s == `\.` {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r', '"', ',':
			return true
		}
	}
	if c := s[0]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
	}
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

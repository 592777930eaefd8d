package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"testing"
	"unsafe"
)

// oracleCell is the text of a cell as the CSV writer made it before
// appendRecord: a string per cell, quoted by encoding/csv. appendRecord's
// bytes must be the same.
func oracleCell(v reflect.Value, c column) string {
	var f reflect.Value
	if c.path != nil {
		f = v.FieldByIndex(c.path)
	} else {
		f = v.Field(c.index)
	}
	if c.ptr {
		if f.IsNil() {
			return ""
		}
		f = f.Elem()
	}
	switch c.kind {
	case reflect.String:
		return f.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(f.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(f.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return FormatFloat(f.Float())
	case reflect.Bool:
		return strconv.FormatBool(f.Bool())
	case reflect.Slice:
		// A list cell (a LIST column in Parquet) is its JSON array in CSV.
		if f.Len() == 0 {
			return "[]"
		}
		js, err := json.Marshal(f.Interface())
		if err != nil {
			return err.Error()
		}
		return string(js)
	}
	return fmt.Sprint(f.Interface())
}

// oracleCSV is the CSV of rows through oracleCell and encoding/csv.
func oracleCSV[T any](t testing.TB, rows []T) []byte {
	t.Helper()
	cols := columnsOf(reflect.TypeFor[T]())
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	rec := make([]string, len(cols))
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for j, c := range cols {
			rec[j] = oracleCell(v, c)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.Bytes()
}

// newCSV is the CSV of rows through appendRecord.
func newCSV[T any](rows []T) []byte {
	cols := columnsOf(reflect.TypeFor[T]())
	var b []byte
	for i := range rows {
		b = appendRecord(b, unsafe.Pointer(&rows[i]), cols)
	}
	return b
}

type csvEmbedded struct {
	Run  string `parquet:"run_id"`
	Hash string `parquet:"config_hash"`
}

type csvKinds struct {
	S string `parquet:"s"`
	csvEmbedded
	I8   int8      `parquet:"i8"`
	U16  uint16    `parquet:"u16"`
	I    int       `parquet:"i"`
	I32  int32     `parquet:"i32"`
	U    uint64    `parquet:"u"`
	F    float64   `parquet:"f"`
	F32  float32   `parquet:"f32"`
	B    bool      `parquet:"b"`
	PI   *int64    `parquet:"pi,optional"`
	PF   *float64  `parquet:"pf,optional"`
	PS   *string   `parquet:"ps,optional"`
	L    []string  `parquet:"l,list"`
	LF   []float64 `parquet:"lf,list"`
	Skip string    `parquet:"-"`
}

// csvStrings are fields that exercise every quoting rule: delimiters,
// quotes, both line breaks, `\.`, leading ASCII and Unicode spaces, and
// invalid UTF-8.
var csvStrings = []string{
	"", "plain", "a,b", `say "hi"`, `"`, `""`, "line\nbreak", "cr\rhere", "\r\n", `\.`, `\.x`, " lead", "\tlead",
	"\vx", "\fx", "\u00a0nbsp", "\u0085nel", "\u2003em", "\u3000ideo", "x ", "trail\n", "\xff\xfe", "é,\"ü\"", "a\"b\"c",
}

// TestAppendRecordMatchesEncodingCSV compares appendRecord with the former
// writer (oracleCell through encoding/csv) on every column kind, null and
// set optional values, lists, and every quoting case.
func TestAppendRecordMatchesEncodingCSV(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	var rows []csvKinds
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-7, 1e21, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), 0.1 + 0.2}
	for i, s := range csvStrings {
		r := csvKinds{csvEmbedded: csvEmbedded{Run: s, Hash: "h"}, S: s, I: i - 3, I32: math.MinInt32 + int32(i),
			U: math.MaxUint64 - uint64(i), F: floats[i%len(floats)], F32: float32(floats[(i+3)%len(floats)]), B: i%2 == 0}
		r.I8, r.U16 = int8(-i*9), uint16(i*2999)
		if i%3 != 0 {
			r.PI, r.PF, r.PS = i64(int64(i)*-7), f64(floats[(i+5)%len(floats)]), str(csvStrings[(i+1)%len(csvStrings)])
		}
		if i%4 == 1 {
			r.L, r.LF = []string{s, "x"}, []float64{1.5, 2}
		}
		rows = append(rows, r)
	}
	want, got := oracleCSV(t, rows), newCSV(rows)
	if !bytes.Equal(got, want) {
		t.Errorf("appendRecord differs from encoding/csv:\n got %q\nwant %q", got, want)
	}
	// The header is one field per column name.
	if got, want := newCSV([]sampleRow{{Path: " x"}}), oracleCSV(t, []sampleRow{{Path: " x"}}); !bytes.Equal(got, want) {
		t.Errorf("sampleRow: got %q, want %q", got, want)
	}
}

// FuzzAppendField checks appendField against encoding/csv's Writer on any
// string.
func FuzzAppendField(f *testing.F) {
	for _, s := range csvStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.Write([]string{s}); err != nil {
			t.Skip(err)
		}
		w.Flush()
		if got, want := string(appendField(nil, s))+"\n", b.String(); got != want {
			t.Errorf("appendField(%q) = %q, want %q", s, got, want)
		}
	})
}

// BenchmarkCSV formats rows of every column kind as CSV: appendRecord
// against the former writer (oracleCell through encoding/csv), side by
// side.
func BenchmarkCSV(b *testing.B) {
	var rows []csvKinds
	for i := 0; i < 1000; i++ {
		x := float64(i) / 7
		rows = append(rows, csvKinds{S: "/home/user/projects/some-repo/" + strconv.Itoa(i) + ".jsonl",
			csvEmbedded: csvEmbedded{Run: "run-0123456789abcdef", Hash: "cfg-0123456789abcdef"},
			I:           i, I32: int32(i), U: uint64(i), F: x, F32: float32(x), B: i%2 == 0, PF: &x})
	}
	cols := columnsOf(reflect.TypeFor[csvKinds]())
	b.Run("appendRecord", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = buf[:0]
			for i := range rows {
				buf = appendRecord(buf, unsafe.Pointer(&rows[i]), cols)
			}
		}
	})
	b.Run("encoding-csv", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		rec := make([]string, len(cols))
		for b.Loop() {
			buf.Reset()
			w := csv.NewWriter(&buf)
			for i := range rows {
				v := reflect.ValueOf(&rows[i]).Elem()
				for j, c := range cols {
					rec[j] = oracleCell(v, c)
				}
				w.Write(rec)
			}
			w.Flush()
		}
	})
}

package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
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
	LS   []csvItem `parquet:"ls,list"`
	Skip string    `parquet:"-"`
}

// csvItem is a list element written without json.Marshal (listJSON).
type csvItem struct {
	Key string `parquet:"key" json:"key"`
	N   int64  `parquet:"n" json:"n"`
	I   int    `parquet:"i" json:"i_x"`
	I32 int32  `parquet:"i32"`
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
		if i%3 == 1 {
			r.LS = []csvItem{{Key: s, N: int64(i) - 9, I: math.MaxInt, I32: math.MinInt32}, {Key: "path", N: 1}}
		}
		rows = append(rows, r)
	}
	want, got := oracleCSV(t, rows), newCSV(rows)
	if !bytes.Equal(got, want) {
		t.Errorf("appendRecord differs from encoding/csv:\n got %q\nwant %q", got, want)
	}
	// Read back, the file gives every cell as the oracle made it (a quoted
	// CRLF reads as LF).
	checkReadBack(t, got, rows)
}

// checkReadBack parses data with encoding/csv's Reader and compares each
// record with the oracle's cells of rows.
func checkReadBack[T any](t *testing.T, data []byte, rows []T) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv cannot read %q: %v", data, err)
	}
	if len(recs) != len(rows) {
		t.Fatalf("%d records read back, %d rows written", len(recs), len(rows))
	}
	cols := columnsOf(reflect.TypeFor[T]())
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for j, c := range cols {
			if want := strings.ReplaceAll(oracleCell(v, c), "\r\n", "\n"); recs[i][j] != want {
				t.Errorf("row %d column %s read back as %q, want %q", i, c.name, recs[i][j], want)
			}
		}
	}
}

// TestCSVHeader checks the first line of a table's CSV file: the column
// names, as listed here, in field order with the embedded struct's in its
// place, written as encoding/csv writes them; with no rows and with rows.
func TestCSVHeader(t *testing.T) {
	header := func(names ...string) string {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		if err := w.Write(names); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		return b.String()
	}
	kinds := header("s", "run_id", "config_hash", "i8", "u16", "i", "i32", "u", "f", "f32", "b", "pi", "pf", "ps", "l", "lf", "ls")
	tests := []struct {
		name string
		file func(dir string) error
		want string
	}{
		{"sample, no rows", func(dir string) error { return writeCSVTable[sampleRow](dir, nil) }, header("path", "n", "ratio", "ok", "opt")},
		{"sample, a row", func(dir string) error {
			return writeCSVTable(dir, []sampleRow{{Path: "path,n", N: 1}})
		}, header("path", "n", "ratio", "ok", "opt") + "\"path,n\",1,0,false,\n"},
		{"kinds, no rows", func(dir string) error { return writeCSVTable[csvKinds](dir, nil) }, kinds},
		{"spaced names", func(dir string) error { return writeCSVTable[csvSpaced](dir, nil) }, header(" lead", "say \"hi\"", "a\nb")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.file(dir); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "t.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("file\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// csvSpaced has column names that must be quoted in CSV.
type csvSpaced struct {
	A string `parquet:" lead"`
	B string `parquet:"say \"hi\""`
	C string `parquet:"a\nb"`
}

// writeCSVTable writes rows to dir/t.csv through a Table.
func writeCSVTable[T any](dir string, rows []T) error {
	tb, err := NewTable[T](dir, "t", Formats{CSV: true})
	if err != nil {
		return err
	}
	if err := tb.Write(rows...); err != nil {
		return err
	}
	return tb.Close()
}

// csvHostile are fields that csv writers get wrong: quotes at either end
// or alone, bare CR and LF, CRLF, commas, leading spaces of every kind,
// nothing, bytes that are not UTF-8, and long runs (past any buffer).
var csvHostile = []string{
	`"`, `""`, `"a`, `a"`, `a""b`, "\r", "\n", "\r\n", "\n\r", "a\rb", ",", ",,", " ,", " ", "  x", "\tx", "\u00a0x",
	"\u2028x", "", "\x80", "\xc3", "\xff\xfe,\"", "é", `\.`, `\.\.`, "\\", strings.Repeat("a", 70000),
	strings.Repeat(`"`, 5000) + "\n" + strings.Repeat(",", 5000), strings.Repeat("\xff", 4097),
}

// FuzzAppendRecord checks whole records of appendRecord against
// encoding/csv's Writer fed the oracle's cells, and reads them back with
// its Reader: two string cells from the fuzzer placed in several columns
// (plain, embedded, optional, inside a list), with numbers between.
func FuzzAppendRecord(f *testing.F) {
	for i, s := range csvHostile {
		f.Add(s, csvHostile[(i+1)%len(csvHostile)], int64(i)-5, float64(i)/3, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64, x float64, set bool) {
		r := csvKinds{S: a, csvEmbedded: csvEmbedded{Run: b, Hash: a + b}, I: int(n), F: x, L: []string{a, b},
			LS: []csvItem{{Key: b, N: n}, {Key: a, I: int(n)}}}
		if set {
			r.PS, r.PI = &b, &n
		}
		rows := []csvKinds{r, {S: b, csvEmbedded: csvEmbedded{Run: a}}}
		got, want := newCSV(rows), oracleCSV(t, rows)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendRecord differs from encoding/csv:\n got %q\nwant %q", got, want)
		}
		checkReadBack(t, got, rows)
	})
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

// hasSpecialOracle is hasSpecial byte by byte.
func hasSpecialOracle(s string) bool {
	for i := 0; i < len(s); i++ {
		if csvSpecial[s[i]] {
			return true
		}
	}
	return false
}

// TestHasSpecial puts every byte value at every position of strings of 0
// to 40 bytes (the word-at-a-time search's words and its tail), over
// backgrounds near the special bytes, and compares with the byte loop.
func TestHasSpecial(t *testing.T) {
	for _, bg := range []byte{'a', 0, 0xff, '\n' + 1, '\r' - 1, '"' + 1, ',' - 1, 0x80, 0x8a} {
		for n := 0; n <= 40; n++ {
			base := bytes.Repeat([]byte{bg}, n)
			if got, want := hasSpecial(string(base)), hasSpecialOracle(string(base)); got != want {
				t.Fatalf("hasSpecial(%q) = %v, want %v", base, got, want)
			}
			for i := 0; i < n; i++ {
				for c := 0; c < 256; c++ {
					s := bytes.Clone(base)
					s[i] = byte(c)
					if got, want := hasSpecial(string(s)), hasSpecialOracle(string(s)); got != want {
						t.Fatalf("hasSpecial(%q) = %v, want %v", s, got, want)
					}
				}
			}
		}
	}
}

func FuzzHasSpecial(f *testing.F) {
	for _, s := range csvHostile {
		f.Add(s)
	}
	f.Add("/home/user/projects/some-repo/sessions/0123.jsonl")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hasSpecial(s), hasSpecialOracle(s); got != want {
			t.Fatalf("hasSpecial(%q) = %v, want %v", s, got, want)
		}
	})
}

// jsonName is a string type that marshals itself.
type jsonName string

func (n jsonName) MarshalJSON() ([]byte, error) { return []byte(`"name"`), nil }

// TestListOf: the list types json.Marshal writes differently from the
// plain form (other names, options, element and field types, methods) are
// left to json.Marshal.
func TestListOf(t *testing.T) {
	type named string
	for _, c := range []struct {
		typ  reflect.Type
		fast bool
	}{
		{reflect.TypeFor[[]string](), true},
		{reflect.TypeFor[[]csvItem](), true},
		{reflect.TypeFor[[]float64](), false},
		{reflect.TypeFor[[]named](), false},
		{reflect.TypeFor[[]jsonName](), false},
		{reflect.TypeFor[[]struct {
			A string `json:"a,omitempty"`
		}](), false},
		{reflect.TypeFor[[]struct {
			A string `json:"-"`
		}](), false},
		{reflect.TypeFor[[]struct {
			A string `json:"a b"`
		}](), false},
		{reflect.TypeFor[[]struct {
			A jsonName `json:"a"`
		}](), false},
		{reflect.TypeFor[[]struct {
			A float64 `json:"a"`
		}](), false},
		{reflect.TypeFor[[]struct{ a string }](), false},
		{reflect.TypeFor[[]struct {
			A string `json:"B"`
			B string
		}](), false},

		{reflect.TypeFor[[]struct{}](), false},
		{reflect.TypeFor[string](), false},
	} {
		if got := listOf(c.typ) != nil; got != c.fast {
			t.Errorf("listOf(%v) written without json.Marshal: %v, want %v", c.typ, got, c.fast)
		}
	}
}

// FuzzListJSON compares list cells of strings and of structs with
// json.Marshal quoted by appendField.
func FuzzListJSON(f *testing.F) {
	for i, s := range csvHostile {
		f.Add(s, csvHostile[(i+3)%len(csvHostile)], int64(i)*-1e12)
	}
	for _, s := range []string{"<a>&\u2028\u2029", "<", "a>b", "x&y", "\u2028", "\u2029", "é", "\x7f", "\x00", "\t", "\\", `"`, "\xff"} {
		f.Add(s, "plain", int64(math.MinInt64))
	}
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		items := []csvItem{{Key: a, N: n, I: int(n), I32: int32(n)}, {Key: b}}
		strs := []string{a, b, a + b}
		for _, c := range []struct {
			typ reflect.Type
			p   unsafe.Pointer
			v   any
		}{
			{reflect.TypeFor[[]csvItem](), unsafe.Pointer(&items), items},
			{reflect.TypeFor[[]string](), unsafe.Pointer(&strs), strs},
		} {
			js, err := json.Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			want := string(appendField([]byte("x"), string(js)))
			if got := string(listOf(c.typ).appendCell([]byte("x"), c.p)); got != want {
				t.Fatalf("list cell %q, json.Marshal gives %q", got, want)
			}
		}
	})
}

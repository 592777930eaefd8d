package report

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type sampleRow struct {
	Path  string   `parquet:"path"`
	N     int64    `parquet:"n"`
	Ratio float64  `parquet:"ratio"`
	OK    bool     `parquet:"ok"`
	Opt   *float64 `parquet:"opt,optional"`
	//lint:ignore U1000 an unexported field is not a column: the tests check it is left out
	skip int
}

func f64(v float64) *float64 { return &v }

// TestTableRoundTrip writes rows as CSV and Parquet and reads both back with
// independent readers (encoding/csv, parquet-go's reader).
func TestTableRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tb, err := NewTable[sampleRow](dir, "sample", Formats{CSV: true, Parquet: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := []sampleRow{
		{Path: "a,b.jsonl", N: 3, Ratio: 0.625, OK: true, Opt: f64(1.5)},
		{Path: "quote\"d\nline", N: -1, Ratio: 1e-7, OK: false},
	}
	for i := 0; i < 2*rowGroupRows+5000; i++ { // several Parquet flushes and row groups
		rows = append(rows, sampleRow{Path: "p", N: int64(i), Ratio: float64(i) / 3})
	}
	if err := tb.Write(rows...); err != nil {
		t.Fatal(err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "sample.*")); len(matches) != 0 {
		t.Errorf("final files exist before Close: %v", matches)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}

	f, _ := os.Open(filepath.Join(dir, "sample.csv"))
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "path,n,ratio,ok,opt" {
		t.Errorf("header = %v", recs[0])
	}
	if got := recs[1]; strings.Join(got, "|") != "a,b.jsonl|3|0.625|true|1.5" {
		t.Errorf("row 1 = %q", got)
	}
	if got := recs[2]; strings.Join(got, "|") != "quote\"d\nline|-1|0.0000001|false|" {
		t.Errorf("row 2 = %q", got)
	}
	if len(recs) != len(rows)+1 {
		t.Errorf("%d CSV records, want %d", len(recs), len(rows)+1)
	}

	back, err := parquet.ReadFile[sampleRow](filepath.Join(dir, "sample.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rows) {
		t.Errorf("parquet rows differ: first %+v", back[:2])
	}
	// Row groups are bounded, so a writer's memory does not grow with the
	// table.
	pf, err := os.Open(filepath.Join(dir, "sample.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fi, _ := pf.Stat()
	meta, err := parquet.OpenFile(pf, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if groups, want := len(meta.RowGroups()), (len(rows)+rowGroupRows-1)/rowGroupRows; groups != want {
		t.Errorf("%d row groups, want %d of at most %d rows", groups, want, rowGroupRows)
	}
	if Columns[sampleRow]()[4] != "opt" {
		t.Errorf("columns = %v", Columns[sampleRow]())
	}
}

func TestTableAbort(t *testing.T) {
	dir := t.TempDir()
	tb, err := NewTable[sampleRow](dir, "gone", Formats{CSV: true, Parquet: true})
	if err != nil {
		t.Fatal(err)
	}
	tb.Write(sampleRow{Path: "x"})
	tb.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("abort left %d files", len(entries))
	}
}

func TestFormatFloat(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.1: "0.1", 1.0 / 3: "0.3333333333333333", 1e21: "1000000000000000000000", -2.5: "-2.5"} {
		if got := FormatFloat(v); got != want {
			t.Errorf("FormatFloat(%v) = %s, want %s", v, got, want)
		}
	}
}

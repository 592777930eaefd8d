package report

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// oracleParquet is a table's Parquet file as the tables wrote it before
// chunker: rows gathered in a slice, handed to the writer once it held
// batchRows (4096) or more, the rest at the end. Its writer is configured
// here, not from the tables' settings, so that a change there shows: zstd at
// its fastest level, row groups of 16384 rows, pages of 32 KiB.
func oracleParquet[T any](t testing.TB, calls [][]T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b, parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}),
		parquet.CreatedBy("compactbench", "", ""),
		parquet.MaxRowsPerRowGroup(16384), parquet.PageBufferSize(32<<10))
	var buf []T
	flush := func() {
		if len(buf) == 0 {
			return
		}
		if _, err := w.Write(buf); err != nil {
			t.Fatal(err)
		}
		buf = buf[:0]
	}
	for _, rows := range calls {
		buf = append(buf, rows...)
		if len(buf) >= 4096 {
			flush()
		}
	}
	flush()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// plainParquet writes rows the simplest way: one call, the writer's
// default settings (zstd's default level), one row group per 16384 rows.
func plainParquet[T any](t testing.TB, rows []T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(16384))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readParquet decodes a Parquet file's rows, and checks that every column
// chunk is zstd-compressed; it returns the rows and the row groups' sizes.
func readParquet[T any](t testing.TB, data []byte) ([]T, []int64) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var groups []int64
	for _, rg := range f.Metadata().RowGroups {
		groups = append(groups, rg.NumRows)
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Zstd {
				t.Errorf("column %v compressed with %v, want zstd", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
	rows, err := parquet.Read[T](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return rows, groups
}

// sameSampleRows reports the first row where got and want differ, or -1.
func sameSampleRows(got, want []sampleRow) int {
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.Path != w.Path || g.N != w.N || g.Ratio != w.Ratio || g.OK != w.OK ||
			(g.Opt == nil) != (w.Opt == nil) || g.Opt != nil && *g.Opt != *w.Opt {
			return i
		}
	}
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	return -1
}

// TestChunkerMatchesBatches writes the same Write calls through Table and
// through the former batching, and requires the same Parquet bytes: calls of
// every size (none, one row, a chunk and a row more, a whole batch, several
// row groups at once), with cells long enough that pages close at many
// different rows.
func TestChunkerMatchesBatches(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	row := func(i int) sampleRow {
		s := strings.Repeat("x", r.IntN(300))
		x := sampleRow{Path: s, N: int64(i), Ratio: float64(i) / 7, OK: i%3 == 0}
		if i%5 == 0 {
			x.Opt = f64(float64(i) / 3)
		}
		return x
	}
	sizes := map[string][]int{
		"small":      {0, 1, 2, 63, 64, 65, 0, 127, 1, 4000, 95, 1, 1},
		"exact":      {4096, 10, 100, 4096, 64, 4032, 8192, 3},
		"huge":       {3*rowGroupRows + 17, 5, rowGroupRows - 5, 3},
		"straddling": {4095, 2, 4094, 1, 1, 16383, 70, 1},
	}
	var random []int
	for total := 0; total < 3*rowGroupRows; {
		n := r.IntN(600)
		if r.IntN(20) == 0 {
			n = r.IntN(6000)
		}
		random = append(random, n)
		total += n
	}
	sizes["random"] = random
	for name, ns := range sizes {
		t.Run(name, func(t *testing.T) {
			var calls [][]sampleRow
			i := 0
			for _, n := range ns {
				rows := make([]sampleRow, n)
				for k := range rows {
					rows[k] = row(i)
					i++
				}
				calls = append(calls, rows)
			}
			want := oracleParquet(t, calls)
			all := slices.Concat(calls...) // a copy: Write must not change the caller's rows, but might
			dir := t.TempDir()
			tb, err := NewTable[sampleRow](dir, "s", Formats{Parquet: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, rows := range calls {
				if err := tb.Write(rows...); err != nil {
					t.Fatal(err)
				}
			}
			if err := tb.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "s.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%d rows in %d calls: Parquet file differs from the batched writer's (%d bytes, want %d)", i, len(calls), len(got), len(want))
			}
			// Whatever the bytes, the file holds the rows written, in
			// order, in full row groups but the last, as the simplest
			// writer's file does.
			rows, groups := readParquet[sampleRow](t, got)
			if k := sameSampleRows(rows, all); k >= 0 {
				t.Errorf("%d rows read, %d written; first difference at row %d", len(rows), len(all), k)
			}
			plain, plainGroups := readParquet[sampleRow](t, plainParquet(t, all))
			if k := sameSampleRows(rows, plain); k >= 0 || !slices.Equal(groups, plainGroups) {
				t.Errorf("rows differ from the plain writer's at row %d; row groups %v, plain %v", k, groups, plainGroups)
			}
		})
	}
}

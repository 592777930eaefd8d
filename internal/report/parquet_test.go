package report

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// oracleParquet is a table's Parquet file as the tables wrote it before
// chunker: rows gathered in a slice, handed to the writer once it held
// batchRows or more, the rest at the end.
func oracleParquet[T any](t testing.TB, calls [][]T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[T](&b, parquet.Compression(&pqZstd),
		parquet.CreatedBy("compactbench", "", ""),
		parquet.MaxRowsPerRowGroup(rowGroupRows), parquet.PageBufferSize(pageBufferSize))
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
		if len(buf) >= batchRows {
			flush()
		}
	}
	flush()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
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
		return sampleRow{Path: s, N: int64(i), Ratio: float64(i) / 7, OK: i%3 == 0}
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
		})
	}
}

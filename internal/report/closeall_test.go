package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/analysis"
)

// otherRow is a second row type, so that the tables closed at once differ
// in their Parquet schema as a run's do.
type otherRow struct {
	Name string  `parquet:"name"`
	V    float64 `parquet:"v"`
}

// sinksFor opens n tables in dir, alternately of sampleRow and otherRow,
// and writes rows of varied sizes to each (the largest spans several row
// groups).
func sinksFor(t *testing.T, dir string, n int) []sink {
	t.Helper()
	var out []sink
	for k := range n {
		rows := k * rowGroupRows / 3
		if k%2 == 0 {
			tb, err := NewTable[sampleRow](dir, fmt.Sprintf("t%d", k), Formats{CSV: true, Parquet: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				if err := tb.Write(sampleRow{Path: strings.Repeat("p", i%7), N: int64(i * k), Ratio: float64(i) / 7, OK: i%3 == 0}); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, tableSink[sampleRow]{Table: tb})
			continue
		}
		tb, err := NewTable[otherRow](dir, fmt.Sprintf("t%d", k), Formats{CSV: true, Parquet: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if err := tb.Write(otherRow{Name: fmt.Sprint(i % 101), V: float64(i*k) / 3}); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, tableSink[otherRow]{Table: tb})
	}
	return out
}

// TestCloseAllBytes checks that closing the tables at once (closeAll)
// writes the bytes of closing them one after the other (closeSinks, the
// oracle), file for file.
func TestCloseAllBytes(t *testing.T) {
	seq, par := t.TempDir(), t.TempDir()
	if err := closeSinks(sinksFor(t, seq, 7)); err != nil {
		t.Fatal(err)
	}
	if err := closeAll(sinksFor(t, par, 7)); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadDir(seq)
	got, _ := os.ReadDir(par)
	if len(got) != len(want) || len(want) != 14 {
		t.Fatalf("files: %d at once, %d one by one, want 14", len(got), len(want))
	}
	for _, e := range want {
		a, err := os.ReadFile(filepath.Join(seq, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(par, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: %d bytes closed at once differ from the %d closed one by one", e.Name(), len(b), len(a))
		}
	}
}

// errSink fails its Close.
type errSink struct{ err error }

func (e errSink) add(*analysis.Result) error { return nil }
func (e errSink) Close() error               { return e.err }
func (e errSink) Abort()                     {}

// TestCloseAllError checks that closeAll returns the first failure in the
// sinks' order and still closes the others.
func TestCloseAllError(t *testing.T) {
	dir := t.TempDir()
	sinks := sinksFor(t, dir, 3)
	e1, e2 := errors.New("first"), errors.New("second")
	sinks = []sink{sinks[0], errSink{e1}, sinks[1], errSink{e2}, sinks[2]}
	if err := closeAll(sinks); err != e1 {
		t.Fatalf("closeAll = %v, want %v", err, e1)
	}
	for _, name := range []string{"t0.csv", "t1.parquet", "t2.csv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not closed beside the failing sinks: %v", name, err)
		}
	}
}

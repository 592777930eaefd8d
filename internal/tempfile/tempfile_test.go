package tempfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestUnlinked checks that the file is readable and writable after its
// name is gone, that the name is gone (not on Windows), and that it was
// made in TMPDIR under the prefix.
func TestUnlinked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	f, err := Unlinked("compactbench-test")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if filepath.Dir(f.Name()) != dir || !strings.HasPrefix(filepath.Base(f.Name()), "compactbench-test-") {
		t.Errorf("file %s, want compactbench-test-* in %s", f.Name(), dir)
	}
	if _, err := f.WriteAt([]byte("hello"), 3); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if _, err := f.ReadAt(got, 3); err != nil || string(got) != "hello" {
		t.Errorf("read back %q, %v", got, err)
	}
	if _, err := os.Stat(f.Name()); runtime.GOOS != "windows" && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the name is still there: %v", err)
	}
}

// TestUnlinkedError: a temporary directory that does not exist is an
// error, not a panic (the logs then keep their data in memory), and Check
// reports it.
func TestUnlinkedError(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if f, err := Unlinked("x"); err == nil {
		f.Close()
		t.Error("no error for a missing temporary directory")
	}
	if err := Check(); err == nil {
		t.Error("Check: no error for a missing temporary directory")
	}
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if err := Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if left, _ := os.ReadDir(dir); runtime.GOOS != "windows" && len(left) != 0 {
		t.Errorf("Check left %d files", len(left))
	}
}

// TestLog: whatever the memory bound, and whether or not the file can be
// made, the log reads back what was appended, whole (Reader) and in any
// part (Slice) and as fixed-size records (Each), and keeps at most the bound plus one record in memory
// while its file works.
func TestLog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limit   int
		noTmp   bool
		inFile  bool
		maxBuf  int
		records int
	}{
		{"memory", 1 << 20, false, false, 1 << 20, 200},
		{"every record", 1, false, true, 16, 200},
		{"a few records", 40, false, true, 40 + 16, 200},
		{"empty", 1, false, false, 0, 0},
		{"no temporary directory", 40, true, false, 1 << 20, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.noTmp {
				dir = filepath.Join(dir, "missing")
			}
			t.Setenv("TMPDIR", dir)
			rng := rand.New(rand.NewPCG(1, uint64(tc.limit)))
			var l Log
			var want []byte
			var offs []int64
			for range tc.records {
				rec := make([]byte, 1+rng.IntN(15))
				for i := range rec {
					rec[i] = byte(rng.Uint32())
				}
				offs = append(offs, l.Len())
				l.Buf = append(l.Buf, rec...)
				want = append(want, rec...)
				l.Flush(tc.limit)
				if len(l.Buf) > tc.maxBuf {
					t.Fatalf("%d bytes in memory, bound %d", len(l.Buf), tc.limit)
				}
			}
			offs = append(offs, l.Len())
			if got := l.InFile() > 0; got != tc.inFile {
				t.Errorf("in the file: %v, want %v", got, tc.inFile)
			}
			if l.Len() != int64(len(want)) {
				t.Errorf("Len %d, want %d", l.Len(), len(want))
			}
			got, err := io.ReadAll(l.Reader())
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(want))
			}
			for i := 0; i+1 < len(offs); i++ {
				for _, end := range []int64{offs[i+1], offs[len(offs)-1]} { // a record, then all to the end
					b, err := l.Slice(offs[i], end)
					if err != nil || !bytes.Equal(b, want[offs[i]:end]) {
						t.Fatalf("Slice(%d, %d) = %x (%v), want %x", offs[i], end, b, err, want[offs[i]:end])
					}
				}
			}
			var each []byte
			for _, size := range []int{1, 3} { // records of one byte, then of three (the last bytes left over)
				each = each[:0]
				if err := l.Each(size, func(rec []byte) { each = append(each, rec...) }); err != nil || !bytes.Equal(each, want[:len(want)/size*size]) {
					t.Fatalf("Each(%d): %d bytes (%v), want %d", size, len(each), err, len(want)/size*size)
				}
			}
			l.Close()
			if _, err := l.Slice(0, int64(len(want))); err == nil && len(want) > 0 {
				t.Error("the log was read after Close")
			}
			if err := l.Each(1, func([]byte) {}); err == nil && l.InFile() > 0 {
				t.Error("Each read the file after Close")
			}
		})
	}
}

// Package report writes every output: the tables as CSV and Parquet,
// summary.json, and the human-facing reports, rendering the aggregates
// internal/aggregate computes from the analysis results. A
// single goroutine owns all writers (Parquet writers are not goroutine-safe);
// files are written under a temporary name and renamed when complete, so an
// interrupted run never leaves a half file that looks whole.
package report

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	pqzstd "github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// column describes one exported field of a row struct.
type column struct {
	name  string
	index int
	path  []int // the field's index path when it is promoted from an embedded struct
	kind  reflect.Kind
	ptr   bool // optional value: empty in CSV, null in Parquet
	// off is the field's offset in the row struct (embedded structs'
	// offsets included) and typ its type (the pointed-to type of an
	// optional value): the CSV writer reads the field through them.
	off uintptr
	typ reflect.Type
	// list writes a list column's CSV cell (nil: json.Marshal does).
	list *listJSON
}

// Columns returns the column names of a row type, from its parquet tags.
func Columns[T any]() []string {
	cols := columnsOf(reflect.TypeFor[T]())
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return names
}

// columnsOf lists a row struct's columns in field order; the fields of an
// embedded struct are columns in its place (as Parquet lays them out).
func columnsOf(t reflect.Type) []column {
	var cols []column
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, c := range columnsOf(f.Type) {
				c.path = append([]int{i}, c.pathOr()...)
				c.off += f.Offset
				cols = append(cols, c)
			}
			continue
		}
		tag := f.Tag.Get("parquet")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		c := column{name: name, index: i, kind: f.Type.Kind(), off: f.Offset, typ: f.Type}
		if c.kind == reflect.Pointer {
			c.ptr, c.kind, c.typ = true, f.Type.Elem().Kind(), f.Type.Elem()
		}
		if !c.ptr {
			c.list = listOf(f.Type)
		}
		cols = append(cols, c)
	}
	return cols
}

// FormatFloat renders a float for text outputs: shortest round-trip form,
// no exponent for ordinary magnitudes, so equal values print identically.
func FormatFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// pathOr is the column's index path.
func (c column) pathOr() []int {
	if c.path != nil {
		return c.path
	}
	return []int{c.index}
}

// Formats selects the output files: CSV and Parquet for every table, and
// the single files summary.json (JSON), report.md (Markdown) and report.html
// (HTML).
type Formats struct {
	CSV      bool
	Parquet  bool
	JSON     bool
	Markdown bool
	HTML     bool
}

// A Parquet writer holds its row group's pages in memory until the group
// is flushed, and a page buffer per column: with the library's defaults (one
// row group per file, 256 KiB pages) a run's memory grew with the corpus
// (1 GiB of generated sessions: 213 MB peak RSS against 60 MB without
// Parquet). These bounds keep it flat (95 MB) for files 3–8 % larger.
const (
	rowGroupRows   = 16384
	pageBufferSize = 32 << 10
)

// fileBufferSize is the write buffer of each CSV and Parquet file. A run
// opens 22 of them and most tables are small: 64 KiB each is 1.4 MB of fresh
// memory to fault in at every start, where 256 KiB was 5.6 MB, for a few more
// write calls on the large tables.
const fileBufferSize = 64 << 10

// Table writes rows of type T to NAME.csv and NAME.parquet in a directory.
type Table[T any] struct {
	name  string
	cols  []column
	files []*pending
	csvb  *bufio.Writer
	pq    *parquet.GenericWriter[T]
	pqc   chunker[T]
	pqb   *bufio.Writer
	rows  int64
}

// pending is an output file being written under a temporary name.
type pending struct {
	f     *os.File
	final string
}

func create(dir, name string) (*pending, error) {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Join(dir, name), err)
	}
	return &pending{f: f, final: filepath.Join(dir, name)}, nil
}

// commit closes the file and moves it to its final name.
func (p *pending) commit() error {
	if err := p.f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p.final, err)
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", p.final, err)
	}
	if err := os.Rename(p.f.Name(), p.final); err != nil {
		return fmt.Errorf("renaming %s: %w", p.final, err)
	}
	return nil
}

func (p *pending) abort() {
	p.f.Close()
	os.Remove(p.f.Name())
}

// NewTable opens the table's files in dir.
func NewTable[T any](dir, name string, formats Formats) (*Table[T], error) {
	t := &Table[T]{name: name, cols: columnsOf(reflect.TypeFor[T]())}
	if formats.CSV {
		p, err := create(dir, name+".csv")
		if err != nil {
			return nil, err
		}
		t.files = append(t.files, p)
		t.csvb = bufio.NewWriterSize(p.f, fileBufferSize)
		b := t.csvb.AvailableBuffer()
		for i, c := range t.cols {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendField(b, c.name)
		}
		t.csvb.Write(append(b, '\n')) // an error stays in csvb for Close
	}
	if formats.Parquet {
		p, err := create(dir, name+".parquet")
		if err != nil {
			t.Abort()
			return nil, err
		}
		t.files = append(t.files, p)
		t.pqb = bufio.NewWriterSize(p.f, fileBufferSize)
		t.pq = parquet.NewGenericWriter[T](t.pqb, parquet.Compression(pqZstd),
			parquet.CreatedBy("compactbench", "", ""),
			parquet.MaxRowsPerRowGroup(rowGroupRows), parquet.PageBufferSize(pageBufferSize))
		t.pqc.w = t.pq
	}
	return t, nil
}

// Write appends rows.
func (t *Table[T]) Write(rows ...T) error {
	if t.csvb != nil {
		for i := range rows {
			b := appendRecord(t.csvb.AvailableBuffer(), unsafe.Pointer(&rows[i]), t.cols)
			if _, err := t.csvb.Write(b); err != nil {
				return fmt.Errorf("%s.csv: %w", t.name, err)
			}
		}
	}
	if t.pq != nil {
		if err := t.pqc.write(rows); err != nil {
			return fmt.Errorf("%s.parquet: %w", t.name, err)
		}
	}
	t.rows += int64(len(rows))
	return nil
}

// Rows is the number of rows written so far.
func (t *Table[T]) Rows() int64 { return t.rows }

// Close finishes the files and gives them their final names.
func (t *Table[T]) Close() error {
	if t.csvb != nil {
		if err := t.csvb.Flush(); err != nil {
			t.Abort()
			return fmt.Errorf("%s.csv: %w", t.name, err)
		}
	}
	if t.pq != nil {
		if err := t.pqc.close(); err != nil {
			t.Abort()
			return fmt.Errorf("%s.parquet: %w", t.name, err)
		}
		if err := t.pq.Close(); err != nil {
			t.Abort()
			return fmt.Errorf("%s.parquet: %w", t.name, err)
		}
		if err := t.pqb.Flush(); err != nil {
			t.Abort()
			return fmt.Errorf("%s.parquet: %w", t.name, err)
		}
	}
	for _, p := range t.files {
		if err := p.commit(); err != nil {
			t.Abort()
			return err
		}
	}
	t.files = nil
	return nil
}

// Abort removes the table's temporary files.
func (t *Table[T]) Abort() {
	for _, p := range t.files {
		p.abort()
	}
	t.files = nil
}

// WriteFileAtomic writes data to dir/name through a temporary file.
func WriteFileAtomic(dir, name string, data []byte) error {
	p, err := create(dir, name)
	if err != nil {
		return err
	}
	if _, err := p.f.Write(data); err != nil {
		p.abort()
		return fmt.Errorf("writing %s: %w", p.final, err)
	}
	return p.commit()
}

// pqZstd compresses the Parquet pages: zstd at its fastest level, which on
// the real corpus's output took about a third less CPU than the default
// level and made the Parquet files 2 % smaller (650 against 663 kB; the pages
// are small and repetitive, where the default level's longer search finds
// little more).
var pqZstd = zstdCodec{lib: &pqzstd.Codec{Level: pqzstd.SpeedFastest}}

// zstdCodec is the Parquet library's zstd codec with encoders that last
// the whole process. The library keeps its encoders in a sync.Pool, which
// every garbage collection empties: a run made new ones again and again
// (each a 256 KiB match table and its block buffers, about 5 MB a run).
// Its pages are the same bytes: the same encoder options, and
// EncodeAll resets the encoder before every page whichever encoder it is.
type zstdCodec struct {
	lib *pqzstd.Codec // String, CompressionCodec and Decode
}

// zstdEncoder is the process's page encoder, made on first use, with the
// options the library's codec gives its own: at most zstdEncoders pages are
// compressed at once (more wait for one).
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(zstdEncoders),
		zstd.WithEncoderLevel(pqzstd.SpeedFastest),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderCRC(false),
	)
	if err != nil {
		panic(err) // the options are constants
	}
	return e
})

// zstdEncoders is how many pages are compressed at once: the tables are
// closed together (closeAll) on a machine of a few cores.
var zstdEncoders = min(runtime.GOMAXPROCS(0), 4)

func (c zstdCodec) String() string                            { return c.lib.String() }
func (c zstdCodec) CompressionCodec() format.CompressionCodec { return c.lib.CompressionCodec() }
func (c zstdCodec) Decode(dst, src []byte) ([]byte, error)    { return c.lib.Decode(dst, src) }

// Encode compresses one page as the library's codec does.
func (c zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	return zstdEncoder().EncodeAll(src, dst[:0]), nil
}

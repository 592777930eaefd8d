package tempfile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// Log is an append-only byte log whose memory is bounded whatever its
// length: records are appended to Buf, and Flush moves Buf to the end of a
// temporary file (Unlinked, made on the first Flush that needs it) once it
// holds enough bytes. If the file cannot be made or written, the log keeps
// everything in Buf from then on: correct, only not bounded. The zero Log
// is empty.
type Log struct {
	// Buf holds the log's bytes that are not in the file, its last ones:
	// append records to it, then call Flush.
	Buf  []byte
	f    *os.File
	size int64 // bytes in f: the log's first ones
	mem  bool  // the file failed: keep everything in Buf
}

// Flush moves Buf to the end of the file once it holds limit bytes or more.
func (l *Log) Flush(limit int) {
	if len(l.Buf) < limit || l.mem {
		return
	}
	if l.f == nil {
		f, err := Unlinked("compactbench-spill")
		if err != nil {
			l.mem = true
			return
		}
		l.f = f
	}
	if _, err := l.f.WriteAt(l.Buf, l.size); err != nil {
		l.mem = true // what WriteAt wrote past size is never read
		return
	}
	l.size += int64(len(l.Buf))
	l.Buf = l.Buf[:0]
}

// Len is the log's length in bytes.
func (l *Log) Len() int64 { return l.size + int64(len(l.Buf)) }

// InFile is how many of the log's bytes are in the file.
func (l *Log) InFile() int64 { return l.size }

// Reader reads the log from its start (through a 64 KiB buffer once part
// of it is in the file).
func (l *Log) Reader() io.Reader {
	mem := bytes.NewReader(l.Buf)
	if l.f == nil {
		return mem
	}
	return bufio.NewReaderSize(io.MultiReader(io.NewSectionReader(l.f, 0, l.size), mem), 64<<10)
}

// Each calls fn with every record of a log of records of size bytes, in
// order (rec is only valid during the call).
func (l *Log) Each(size int, fn func(rec []byte)) error {
	if l.f == nil {
		for b := l.Buf; len(b) >= size; b = b[size:] {
			fn(b[:size])
		}
		return nil
	}
	r := l.Reader()
	rec := make([]byte, size)
	for range l.Len() / int64(size) {
		if _, err := io.ReadFull(r, rec); err != nil {
			return err
		}
		fn(rec)
	}
	return nil
}

// Slice is the log's bytes from off to end: a part of Buf (not to be
// modified) when they are all there, else read from the file into a new
// slice. It may be called from several goroutines while nothing is
// appended.
func (l *Log) Slice(off, end int64) ([]byte, error) {
	if off < 0 || off > end || end > l.Len() {
		return nil, fmt.Errorf("bytes %d to %d of a log of %d", off, end, l.Len())
	}
	if off >= l.size {
		return l.Buf[off-l.size : end-l.size], nil
	}
	b := make([]byte, end-off)
	n := min(end, l.size) - off
	if _, err := l.f.ReadAt(b[:n], off); err != nil {
		return nil, err
	}
	copy(b[n:], l.Buf)
	return b, nil
}

// Close releases the log's file and memory: reading the log afterwards is
// an error.
func (l *Log) Close() {
	if l.f != nil {
		l.f.Close()           // l.f stays, so that reading it is an error
		os.Remove(l.f.Name()) // already gone except on Windows
	}
	l.Buf, l.mem = nil, true
}

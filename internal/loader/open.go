package loader

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/compactbench/compactbench/internal/transcript"
)

// sniffSize is how much decompressed content detection looks at.
const sniffSize = 64 << 10

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// Options control how files are read.
type Options struct {
	// Format forces a reader by name instead of detecting one.
	Format string
	// Limits bound what one file may cost (zero fields: the defaults).
	Limits Limits
	// Context, when set, stops reading: line and value loops check it, so
	// a cancelled run stops within one line or one 256 KiB chunk, even
	// inside one huge file. Reading then ends as at a read error.
	Context context.Context
}

// ReadFile opens path, detects its compression and format, and emits every
// transcript in it. A file no reader recognises, or one that cannot be opened,
// yields a single transcript of format "unknown" carrying the problem, so the
// file is still accounted for; so does a path that is not a regular file (a
// FIFO, socket or device is never opened). The returned error is emit's.
//
// Whatever the content, reading stays within opts.Limits: records over a
// limit are bad records, problems past MaxProblems are summarised, and every
// transcript emitted carries them (see Limits).
func ReadFile(path string, opts Options, emit func(*transcript.Transcript) error) error {
	fail := func(reason string) error { return emit(ProblemTranscript(path, reason)) }
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return fail(fmt.Sprintf("not a regular file (%s); not read", fileKind(info.Mode())))
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(fmt.Sprintf("cannot open: %v", err))
	}
	defer f.Close()

	fileBuf := pooledReader(f)
	defer putReader(fileBuf)
	src, closeSrc, err := openSource(path, f, fileBuf)
	if err != nil {
		return fail(err.Error())
	}
	defer closeSrc()
	src.lim = opts.Limits
	src.ctx = opts.Context
	lim := src.limits()
	if src.Compressed != "" {
		src.R = &capReader{r: src.R, left: lim.MaxDecompressed, max: lim.MaxDecompressed}
	}

	br := fileBuf // an uncompressed file is read through its own buffer
	if src.R != io.Reader(fileBuf) {
		br = pooledReader(src.R)
		defer putReader(br)
	}
	head, perr := br.Peek(sniffSize) // a short file gives a short head and io.EOF
	src.R = limitedReader{br, src}
	if perr != nil && perr != io.EOF && len(head) == 0 {
		if errors.Is(perr, io.ErrUnexpectedEOF) {
			return fail(fmt.Sprintf("truncated %s stream: no complete data", src.Compressed))
		}
		return fail(fmt.Sprintf("reading: %v", perr))
	}

	format, reason, err := formatOf(path, head, opts.Format)
	if err != nil {
		return err
	}
	if format == nil {
		return fail(reason)
	}
	return readSource(src, format, emit)
}

// formatOf returns the format named (an error when no reader has that
// name), or else the one detected from the file's head; with neither, a
// nil format and why.
func formatOf(path string, head []byte, name string) (Format, string, error) {
	if name != "" {
		format, err := Lookup(name)
		return format, "", err
	}
	if format := Detect(path, head); format != nil {
		return format, "", nil
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, "empty file", nil
	}
	return nil, "unrecognised format: no reader claims this file", nil
}

// readSource reads src with format and emits its transcripts, each with
// what the source skipped folded in; lines skipped after the last one make
// a transcript of their own.
func readSource(src *Source, format Format, emit func(*transcript.Transcript) error) error {
	err := format.Read(src, func(t *transcript.Transcript) error {
		src.settle(t)
		t.ClassifyTools()
		return emit(t)
	})
	if err == nil && len(src.lost) > 0 {
		t := &transcript.Transcript{ID: stem(src.Path) + "#file", Path: src.Path, Format: format.Name(), Kind: transcript.KindSession}
		src.settle(t)
		err = emit(t)
	}
	return err
}

// fileKind names a mode that is not a regular file.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// pooledReader returns a reader of lineReaders' (sniffSize bytes of
// buffer) over r; putReader returns it once the file is read.
func pooledReader(r io.Reader) *bufio.Reader {
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// putReader returns a reader of pooledReader's to the pool, without its
// source.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	lineReaders.Put(br)
}

// openSource wraps f, read through br, in the decompressor its first bytes
// call for.
func openSource(path string, f *os.File, br *bufio.Reader) (*Source, func(), error) {
	magic, _ := br.Peek(4)
	src := &Source{Path: path, R: br}
	for _, m := range zipMagic {
		if bytes.HasPrefix(magic, m) {
			return openZip(path, f)
		}
	}
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		src.R, src.Compressed = zr, "gzip"
		return src, func() { zr.Close() }, nil
	case bytes.HasPrefix(magic, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: %w", err)
		}
		src.R, src.Compressed = zr, "zstd"
		return src, zr.Close, nil
	}
	return src, func() {}, nil
}

// ReadAll reads a source to the end. A decompression error after some data
// (a truncated .gz or .zst) returns the data read so far with the error, so
// readers can still use the complete lines.
//
// A document longer than the source's MaxLine is not held: ReadAll returns
// no data and an error saying so.
func ReadAll(src *Source) ([]byte, error) {
	max := src.limits().MaxLine
	data, err := io.ReadAll(io.LimitReader(src.R, int64(max)+1))
	if err != nil {
		return data, src.readError(err)
	}
	if len(data) > max {
		return nil, errors.New(tooLong("document", max))
	}
	if depth := src.limits().MaxDepth; jsonDepth(data, depth) > depth {
		return nil, errors.New(tooDeep("document", depth))
	}
	return data, nil
}

// readError describes an error met while reading the source: a compressed
// stream cut short (a truncated .gz or .zst), or another read failure.
func (s *Source) readError(err error) error {
	if errors.Is(err, errDecompressed) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated %s stream: %w", s.Compressed, err)
	}
	return fmt.Errorf("reading: %w", err)
}

// stem is a file's base name without its compression and format extensions.
func stem(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".gz", ".zst", ".jsonl", ".json", ".traj", ".zip"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// baseName is the file's base name without compression extensions.
func baseName(path string) string {
	base := filepath.Base(path)
	base = strings.TrimSuffix(base, ".gz")
	return strings.TrimSuffix(base, ".zst")
}

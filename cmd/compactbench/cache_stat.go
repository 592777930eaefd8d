package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/compactbench/compactbench/internal/bincodec"
)

// The stat index lets a warm run skip reading and hashing the inputs that
// did not change. It maps a file's absolute path and its fileStat to the
// SHA-256 of its content, so the cache key stays the content's hash: an
// input whose stat differs from the recorded one in any field (a rewrite
// always moves the status-change time, which no program can set back) is
// read and hashed again. A file is recorded only when its stat did not
// change while it was hashed and its times are older than racyWindow when
// hashing starts: a write in the same timestamp tick as the hash (file
// times advance in ticks of a few milliseconds) would otherwise leave the
// stat unchanged. Build systems trust the same fields the same way.
//
// The index is an append-only log in the cache directory, statIndexName:
// records of a uvarint length, a statRecord in bincodec's layout and the
// CRC-32C of that record. Reading stops at the first bad record (a write
// cut short), and the log is then rewritten from the records read; for each
// path the last record wins. When most records are
// superseded the log is rewritten (a temporary file renamed).
const statIndexName = "stat-index"

// racyWindow is how much older than the start of hashing a file's times
// must be for it to be recorded (FAT keeps modification times to 2 s).
var racyWindow = 2 * time.Second

// filesHashed counts the inputs read and hashed (for tests).
var filesHashed atomic.Int64

// fileStat identifies a file's content without reading it (statOf).
type fileStat struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64
}

// statRecord is one record of the log.
type statRecord struct {
	Path string
	Stat fileStat
	Sum  string // SHA-256 of the content, 32 bytes
}

type statIndex struct {
	path string
	mu   sync.Mutex
	m    map[string]statRecord
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// recordCodec compiles the stat record codec once.
var recordCodec = sync.OnceValues(func() (*bincodec.Codec, error) {
	return bincodec.New(&statRecord{}, nil)
})

// openStatIndex reads the index of a cache directory (an empty one when
// there is none or it does not read).
func openStatIndex(dir string) *statIndex {
	ix := &statIndex{path: filepath.Join(dir, statIndexName), m: map[string]statRecord{}}
	codec, err := recordCodec()
	if err != nil {
		return ix
	}
	data, err := os.ReadFile(ix.path)
	if err != nil {
		return ix
	}
	records := 0
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) || uint64(len(data)-k)-n < 4 {
			break
		}
		rec := data[k : k+int(n)]
		if binary.LittleEndian.Uint32(data[k+int(n):]) != crc32.Checksum(rec, crcTable) {
			break
		}
		var r statRecord
		if codec.Decode(rec, &r) != nil || len(r.Sum) != 32 {
			break
		}
		ix.m[r.Path] = r
		records++
		data = data[k+int(n)+4:]
	}
	// A damaged record (a write cut short) hides every record appended
	// after it, so the log is rewritten from what was read: otherwise the
	// index would stop working for good and grow on every run.
	if len(data) > 0 || records > 2*len(ix.m)+1000 {
		ix.rewrite(codec)
	}
	return ix
}

// lookup returns the content hash recorded for a file with this stat.
func (ix *statIndex) lookup(abs string, st fileStat) (string, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	r, ok := ix.m[abs]
	if !ok || r.Stat != st {
		return "", false
	}
	return r.Sum, true
}

// appendRecord encodes a record of the log.
func appendRecord(buf []byte, codec *bincodec.Codec, r *statRecord) []byte {
	rec := codec.Append(nil, r)
	buf = binary.AppendUvarint(buf, uint64(len(rec)))
	buf = append(buf, rec...)
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(rec, crcTable))
}

// add records a file's content hash. Failing to write costs the next run
// a hash, nothing else.
func (ix *statIndex) add(r statRecord) {
	codec, err := recordCodec()
	if err != nil {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.m[r.Path]; ok && old == r {
		return
	}
	ix.m[r.Path] = r
	f, err := os.OpenFile(ix.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.Write(appendRecord(nil, codec, &r)) // one write: appends do not interleave
	f.Close()
}

// rewrite replaces the log with one record per path.
func (ix *statIndex) rewrite(codec *bincodec.Codec) {
	tmp, err := os.CreateTemp(filepath.Dir(ix.path), ".tmp-stat-*")
	if err != nil {
		return
	}
	w := bufio.NewWriter(tmp)
	var buf []byte
	for _, r := range ix.m {
		buf = appendRecord(buf[:0], codec, &r)
		w.Write(buf)
	}
	werr := w.Flush()
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), ix.path) != nil {
		os.Remove(tmp.Name())
	}
}

// contentSum is the SHA-256 of a file's content: from the index when the
// file's stat is the recorded one, else read and hashed (and recorded when
// it is safe to).
func (c *resultCache) contentSum(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(c.wd, path)
	}
	if fi, err := os.Stat(path); err == nil {
		if st, ok := statOf(fi); ok {
			if sum, ok := c.stats.lookup(abs, st); ok {
				return sum, nil
			}
		}
	}
	start := time.Now()
	filesHashed.Add(1)
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	before, berr := f.Stat()
	h := sha256.New()
	buf := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(buf)
	for {
		n, err := f.Read(*buf)
		h.Write((*buf)[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	sum := string(h.Sum(nil))
	after, aerr := f.Stat()
	if berr == nil && aerr == nil {
		st1, ok1 := statOf(before)
		st2, ok2 := statOf(after)
		limit := start.Add(-racyWindow).UnixNano()
		if ok1 && ok2 && st1 == st2 && st1.Mtime < limit && st1.Ctime < limit {
			c.stats.add(statRecord{Path: abs, Stat: st1, Sum: sum})
		}
	}
	return sum, nil
}

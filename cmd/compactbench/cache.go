package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/compactbench/compactbench/internal/analysis"
	"github.com/compactbench/compactbench/internal/anchors"
	"github.com/compactbench/compactbench/internal/bincodec"
	"github.com/compactbench/compactbench/internal/loader"
)

// resultCache keeps each input file's analysis results (run --cache DIR),
// keyed by the file's content hash, its path, the analysis configuration,
// the reader's limits and the build of compactbench, so that a re-run over a grown corpus
// analyses only new or changed files. An entry that does not match its key
// or its checksum, or that does not decode, is ignored and rewritten: a
// stale or corrupt cache costs time, never correctness.
type resultCache struct {
	dir  string
	salt []byte // hashes everything but the file: format, build, config
	sets map[string]*anchors.RuleSet
	// codec encodes and decodes the entries.
	codec *bincodec.Codec
	// wd makes input paths absolute for the stat index.
	wd    string
	stats *statIndex
	// Hits and Misses count files served from and written to the cache;
	// Corrupt counts the entries found under a file's key that failed a
	// check (format, checksum, decoding, key, rule sets) and were ignored.
	Hits, Misses, Corrupt atomic.Int64
	// MemoHits counts the calibration memos found intact (the summary
	// still checks them against its key); MemoCorrupt those that failed
	// their checksum.
	MemoHits, MemoCorrupt atomic.Int64
}

// cacheFormat changes whenever the entry layout does. An entry file is a
// header line, "<cacheFormat> <SHA-256 of the payload, hex>\n", and the
// payload: a cacheEntry in bincodec's layout, whose fingerprint is part of
// every key.
const cacheFormat = "compactbench-cache/3"

// cacheCodec compiles the entry codec once. The results' rule set pointers
// are left out: the sets are configuration, linked again by name on load.
var cacheCodec = sync.OnceValues(func() (*bincodec.Codec, error) {
	ruleSet := reflect.TypeFor[*anchors.RuleSet]()
	return bincodec.New(&cacheEntry{}, func(f reflect.StructField) bool { return f.Type == ruleSet })
})

// openResultCache prepares a cache directory for a configuration.
func openResultCache(dir string, cfg *analysis.Config, inputFormat string, limits loader.Limits) (*resultCache, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--cache: %w", err)
	}
	conf, err := json.Marshal(struct {
		Config *analysis.Config
		Limits loader.Limits
	}{cfg, limits})
	if err != nil {
		return nil, fmt.Errorf("--cache: hashing the configuration: %w", err)
	}
	build, err := buildID()
	if err != nil {
		return nil, fmt.Errorf("--cache: %w", err)
	}
	codec, err := cacheCodec()
	if err != nil {
		return nil, fmt.Errorf("--cache: %w", err)
	}
	wd, _ := os.Getwd() // relative label paths resolve against it
	h := sha256.New()
	for _, part := range []string{cacheFormat, codec.Fingerprint(), version, build, string(conf), inputFormat, wd} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	c := &resultCache{dir: dir, salt: h.Sum(nil), sets: map[string]*anchors.RuleSet{}, codec: codec,
		wd: wd, stats: openStatIndex(dir)}
	if cfg.Anchors != nil {
		for _, s := range cfg.Anchors.Sets {
			c.sets[s.Name] = s
		}
	}
	return c, nil
}

var (
	buildOnce sync.Once
	buildHash string
	buildErr  error
)

// buildID hashes the running executable: a development build carries no
// version of its own, and a changed build may count differently.
func buildID() (string, error) {
	buildOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			buildErr = fmt.Errorf("finding the executable: %w", err)
			return
		}
		f, err := os.Open(exe)
		if err != nil {
			buildErr = fmt.Errorf("hashing the executable: %w", err)
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			buildErr = fmt.Errorf("hashing the executable %s: %w", exe, err)
			return
		}
		buildHash = hex.EncodeToString(h.Sum(nil))
	})
	return buildHash, buildErr
}

// key is a file's cache key: the salt, its path as given and the SHA-256
// of its content (contentSum).
func (c *resultCache) key(path string) (string, error) {
	sum, err := c.contentSum(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write(c.salt)
	fmt.Fprintf(h, "%d:%s;%s", len(path), path, sum)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashBufs are the read buffers of contentSum: 1 MiB reads take a 32nd of
// the system calls of io.Copy's 32 KiB.
var hashBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

func (c *resultCache) file(key string) string { return filepath.Join(c.dir, key[:2], key+".bin") }

// cacheEntry is what an entry file holds after its header line.
type cacheEntry struct {
	Key     string
	Results []*analysis.Result
}

// load returns the cached results of a key, or false when there is no
// usable entry (an entry that exists but fails a check is counted in
// Corrupt).
func (c *resultCache) load(key string) ([]*analysis.Result, bool) {
	data, err := os.ReadFile(c.file(key))
	if err != nil {
		return nil, false
	}
	rs, err := c.decode(key, data)
	if err != nil {
		c.Corrupt.Add(1)
		return nil, false
	}
	return rs, true
}

// decode checks and decodes an entry file read under a key.
func (c *resultCache) decode(key string, data []byte) ([]*analysis.Result, error) {
	// Header: "<cacheFormat> <sha256 of the payload>\n".
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, fmt.Errorf("no header line")
	}
	var format, sum string
	if _, err := fmt.Sscanf(string(data[:nl]), "%s %s", &format, &sum); err != nil || format != cacheFormat {
		return nil, fmt.Errorf("not a %s entry", cacheFormat)
	}
	payload := data[nl+1:]
	if got := sha256.Sum256(payload); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("checksum mismatch")
	}
	var e cacheEntry
	if err := c.codec.Decode(payload, &e); err != nil {
		return nil, err
	}
	if e.Key != key {
		return nil, fmt.Errorf("the entry of key %.12s", e.Key)
	}
	if err := linkRuleSets(e.Results, c.sets); err != nil {
		return nil, err
	}
	return e.Results, nil
}

// warnCorrupt tells how many corrupt entries the run ignored (nothing
// without a cache or when there were none). They are not problem rows: the
// outputs do not depend on the cache.
func (c *resultCache) warnCorrupt(w io.Writer) {
	if c == nil {
		return
	}
	if n := c.Corrupt.Load(); n > 0 {
		fmt.Fprintf(w, "compactbench: warning: cache %s: %d corrupt entries ignored (their files were analysed again and the entries rewritten)\n", c.dir, n)
	}
}

// store writes results under a key (atomically: a temporary file renamed).
// Failing to write is not an error of the run; the entry is just missing.
func (c *resultCache) store(key string, rs []*analysis.Result) {
	payload := c.codec.Append(nil, &cacheEntry{Key: key, Results: rs})
	sum := sha256.Sum256(payload)
	c.writeAtomic(c.file(key), fmt.Sprintf("%s %s\n", cacheFormat, hex.EncodeToString(sum[:])), payload)
}

// writeAtomic writes a header line and a payload to path through a
// temporary file renamed over it; a failure leaves no file behind.
func (c *resultCache) writeAtomic(path, header string, payload []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := io.WriteString(tmp, header)
	if werr == nil {
		_, werr = tmp.Write(payload)
	}
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// analyze is analyzeFile through the cache.
func (c *resultCache) analyze(analyzeFn func() ([]*analysis.Result, error), path string) ([]*analysis.Result, error) {
	key, err := c.key(path)
	if err != nil {
		return analyzeFn() // the reader reports the file's problem
	}
	if rs, ok := c.load(key); ok {
		c.Hits.Add(1)
		return rs, nil
	}
	rs, err := analyzeFn()
	if err == nil {
		c.Misses.Add(1)
		c.store(key, rs)
	}
	return rs, err
}

// calMemoFormat changes whenever the calibration memo's file layout does.
// A memo file is a header line, "<calMemoFormat> <SHA-256 of the payload,
// hex>\n", and the payload aggregate.CalibrationMemo was given.
const calMemoFormat = "compactbench-calmemo/1"

// calMemoFile is where the calibration figures of an aggregate key are
// kept: the key is salted like the results' keys (format, build,
// configuration), so figures of another build or configuration are never
// found.
func (c *resultCache) calMemoFile(key string) string {
	h := sha256.New()
	h.Write(c.salt)
	fmt.Fprintf(h, "calibration;%d:%s", len(key), key)
	return filepath.Join(c.dir, "calibration", hex.EncodeToString(h.Sum(nil))+".json")
}

// Load returns the calibration memo stored under key (aggregate.
// CalibrationMemo), or false when there is none or it fails its checksum
// (then it is counted in MemoCorrupt and rewritten by Store).
func (c *resultCache) Load(key string) ([]byte, bool) {
	data, err := os.ReadFile(c.calMemoFile(key))
	if err != nil {
		return nil, false
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		c.MemoCorrupt.Add(1)
		return nil, false
	}
	payload := data[nl+1:]
	sum := sha256.Sum256(payload)
	if string(data[:nl]) != calMemoFormat+" "+hex.EncodeToString(sum[:]) {
		c.MemoCorrupt.Add(1)
		return nil, false
	}
	c.MemoHits.Add(1)
	return payload, true
}

// Store keeps a calibration memo under key (atomically; failing to write
// only costs the next run the refit).
func (c *resultCache) Store(key string, data []byte) {
	sum := sha256.Sum256(data)
	c.writeAtomic(c.calMemoFile(key), fmt.Sprintf("%s %s\n", calMemoFormat, hex.EncodeToString(sum[:])), data)
}
